#!/usr/bin/env python3
"""Runs a real program with and without LD_PRELOAD=liblethe-malloc.so and checks that under
Lethe it exits 0, prints exactly the same standard output, and that Lethe's statistics at exit
(LETHE_OPTIONS=stats_print:1, printed on stderr by every process of the run) show that it served
the process: the largest process made at least --min-allocations allocations.

usage: preload_check.py --lib liblethe-malloc.so --case python|sqlite|git|cmake [--min-allocations N]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def sqlite_script():
    lines = ["CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, value REAL, payload BLOB);",
             "CREATE INDEX t_name ON t(name);", "BEGIN;"]
    for i in range(4000):
        lines.append("INSERT INTO t(name, value, payload) VALUES('name-%d', %d.5, randomblob(0));"
                     % (i % 97, i * 3))
        if i % 500 == 0:
            lines.append("UPDATE t SET value = value + 1 WHERE name = 'name-%d';" % (i % 13))
    lines += ["COMMIT;",
              "SELECT count(*), sum(value) FROM t;",
              "SELECT name, count(*), round(avg(value), 3) FROM t GROUP BY name ORDER BY name LIMIT 10;",
              "SELECT group_concat(id) FROM (SELECT id FROM t WHERE value > 11000 ORDER BY id LIMIT 20);",
              "DELETE FROM t WHERE id % 2 = 0;", "VACUUM;", "SELECT count(*) FROM t;"]
    return "\n".join(lines) + "\n"


def git_commands(workdir):
    return [
        ["git", "init", "-q", "-b", "main", workdir],
        ["git", "-C", workdir, "add", "."],
        ["git", "-C", workdir, "commit", "-q", "-m", "first"],
        ["git", "-C", workdir, "log", "--stat", "--format=%H %s"],
        ["git", "-C", workdir, "status", "--porcelain"],
        ["git", "-C", workdir, "ls-files", "-s"],
    ]


def prepare_git_tree(workdir):
    for i in range(600):
        sub = os.path.join(workdir, "dir%02d" % (i % 40))
        os.makedirs(sub, exist_ok=True)
        with open(os.path.join(sub, "file%04d.txt" % i), "w") as f:
            f.write("line %d\n" % i * (1 + i % 20))


# String and list work in the CMake language; message(STATUS) prints to standard output.
CMAKE_SCRIPT = """set(items "")
foreach(i RANGE 2000)
  math(EXPR square "${i} * ${i}")
  list(APPEND items "item-${i}-${square}")
endforeach()
list(LENGTH items count)
list(JOIN items "," joined)
string(LENGTH "${joined}" length)
string(SHA256 digest "${joined}")
message(STATUS "${count} items, ${length} characters, ${digest}")
"""


def run_case(case, env):
    """Returns (exit status, stdout, stderr) of the case run with `env`."""
    if case == "python":
        proc = subprocess.run([sys.executable, os.path.join(HERE, "heavy.py")], env=env,
                              capture_output=True, text=True)
        return proc.returncode, proc.stdout, proc.stderr
    if case == "sqlite":
        proc = subprocess.run(["sqlite3", ":memory:"], input=sqlite_script(), env=env,
                              capture_output=True, text=True)
        return proc.returncode, proc.stdout, proc.stderr
    if case == "cmake":
        # `cmake --version` alone makes ~3,000 allocations; a short script run by the same
        # cmake brings the case over the 10^4 the issue asks of every program.
        script = tempfile.NamedTemporaryFile("w", suffix=".cmake", delete=False)
        try:
            script.write(CMAKE_SCRIPT)
            script.close()
            out, err, status = [], [], 0
            for command in (["cmake", "--version"], ["cmake", "-P", script.name]):
                proc = subprocess.run(command, env=env, capture_output=True, text=True)
                status = status or proc.returncode
                out.append(proc.stdout)
                err.append(proc.stderr)
            return status, "".join(out), "".join(err)
        finally:
            os.unlink(script.name)
    if case == "git":
        workdir = tempfile.mkdtemp(prefix="lethe-git-")
        try:
            prepare_git_tree(workdir)
            out, err, status = [], [], 0
            for command in git_commands(workdir):
                proc = subprocess.run(command, env=env, capture_output=True, text=True)
                status = status or proc.returncode
                out.append(proc.stdout.replace(workdir, "WORKDIR"))
                err.append(proc.stderr)
            return status, "".join(out), "".join(err)
        finally:
            shutil.rmtree(workdir)
    raise SystemExit("unknown case " + case)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib", required=True)
    parser.add_argument("--case", required=True)
    parser.add_argument("--min-allocations", type=int, default=10000)
    args = parser.parse_args()

    base = dict(os.environ)
    base.pop("LD_PRELOAD", None)
    base.pop("LETHE_OPTIONS", None)
    # Deterministic git objects; Python's small objects through malloc so Lethe serves them too.
    base.update({"GIT_AUTHOR_NAME": "Lethe", "GIT_AUTHOR_EMAIL": "lethe@example.org",
                 "GIT_COMMITTER_NAME": "Lethe", "GIT_COMMITTER_EMAIL": "lethe@example.org",
                 "GIT_AUTHOR_DATE": "2020-01-01T00:00:00Z",
                 "GIT_COMMITTER_DATE": "2020-01-01T00:00:00Z", "GIT_CONFIG_NOSYSTEM": "1",
                 "HOME": tempfile.gettempdir(), "PYTHONMALLOC": "malloc", "LC_ALL": "C"})
    plain_status, plain_out, _ = run_case(args.case, base)
    lethe = dict(base, LD_PRELOAD=os.path.abspath(args.lib), LETHE_OPTIONS="stats_print:1")
    status, out, err = run_case(args.case, lethe)

    counts = [int(n) for n in re.findall(r"^\s+allocations (\d+)", err, re.M)]
    failed = []
    if plain_status != 0:
        failed.append("the plain run failed (%d)" % plain_status)
    if status != 0:
        failed.append("exit status %d under Lethe" % status)
    if out != plain_out:
        failed.append("standard output differs from the plain run")
    if not counts:
        failed.append("no Lethe statistics on stderr: Lethe did not serve the process")
    elif max(counts) < args.min_allocations:
        failed.append("largest process made %d allocations (< %d)" % (max(counts), args.min_allocations))
    print("%s: %d process(es) on Lethe, allocations per process %s, stdout %d bytes identical=%s"
          % (args.case, len(counts), counts[:8], len(out), out == plain_out))
    if failed:
        print("FAILED: " + "; ".join(failed))
        print("--- stderr under Lethe (tail) ---\n" + err[-3000:])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
