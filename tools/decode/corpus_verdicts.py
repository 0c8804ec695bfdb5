#!/usr/bin/env python3
"""Tallies lethe-decode's outcome for every file of the corpus against its MANIFEST.tsv verdict.

  tools/decode/corpus_verdicts.py LETHE_DECODE [CORPUS_DIR]

Expected (as the issue states it, and as tests/decoders/corpus_test.cc checks with pixels too):
OK -> complete; WARN -> decoded (complete or partial); FAIL/HDR -> an error or a partial result,
never complete; the 12-bit and lossless JPEGs -> unsupported; the two GIFs without any palette follow
the documented policy (an error, or the frames before it marked partial). Exit 1 on any mismatch.
"""
import collections
import json
import os
import subprocess
import sys

UNSUPPORTED = ("ljt-monkey12", "jdec-lossless-sel1")
NO_PALETTE = ("pillow-no_palette.gif", "wuffs-empty-palette.gif")


def outcome(result):
    error = result.get("error")
    if error:
        return "error:" + error["code"]
    return "complete" if result["complete"] else "partial"


def main():
    if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
        print("usage:" + __doc__)
        return 0
    if len(sys.argv) not in (2, 3) or any(arg.startswith("-") for arg in sys.argv[1:]):
        print("usage:" + __doc__, file=sys.stderr)
        return 2
    tool = os.path.abspath(sys.argv[1])
    corpus = sys.argv[2] if len(sys.argv) == 3 else os.path.join(
        os.path.dirname(__file__), "..", "..", "..", "shared", "corpus")
    with open(os.path.join(corpus, "MANIFEST.tsv")) as manifest:
        rows = [line.rstrip("\n").split("\t") for line in manifest][1:]
    paths = [row[0] for row in rows]
    run = subprocess.run([tool, "--json"] + paths, cwd=corpus, capture_output=True, text=True)
    results = {}
    for line in run.stdout.splitlines():
        result = json.loads(line)
        results[result["file"]] = result
    tally = collections.Counter()
    mismatches = []
    for path, notes in ((row[0], row[4]) for row in rows):
        verdict = notes.split("system-lib verdict: ")[1].split(" ")[0]
        got = outcome(results[path])
        if any(name in path for name in UNSUPPORTED):
            verdict, ok = "unsupported", got == "error:unsupported"
        elif any(name in path for name in NO_PALETTE):
            verdict, ok = "no-palette", got != "complete"
        elif verdict == "OK":
            ok = got == "complete"
        elif verdict == "WARN":
            ok = not got.startswith("error")
        else:
            ok = got != "complete"
        tally[(verdict, got, ok)] += 1
        if not ok:
            mismatches.append((path, verdict, got))
    for (verdict, got, ok), count in sorted(tally.items()):
        print(f"  {verdict:12s} -> {got:20s} {'ok' if ok else 'MISMATCH'} x{count}")
    print(f"files {len(rows)}, mismatches {len(mismatches)}")
    for mismatch in mismatches:
        print("  MISMATCH", *mismatch)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
