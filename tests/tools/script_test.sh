#!/usr/bin/env bash
# script_test.sh CASE SOURCE_DIR — checks tools/test.sh and tools/deps.sh without touching the
# machine: dpkg-query and id are replaced by shims on PATH.
set -u
case_name=$1
source_dir=$2
shims=$(mktemp -d)
trap 'rm -rf "$shims"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

make_shims() {  # make_shims UID MISSING_PACKAGE
  cat >"$shims/id" <<SHIM
#!/bin/sh
[ "\$1" = "-u" ] && { echo $1; exit 0; }
exec /usr/bin/id "\$@"
SHIM
  cat >"$shims/dpkg-query" <<SHIM
#!/bin/sh
for last; do :; done
[ "\$last" = "$2" ] && exit 1
printf installed
SHIM
  cat >"$shims/apt-get" <<SHIM
#!/bin/sh
echo "apt-get must not run in this test" >&2
exit 99
SHIM
  chmod +x "$shims/id" "$shims/dpkg-query" "$shims/apt-get"
}

case "$case_name" in
  bad-flag)
    output=$("$source_dir/tools/test.sh" --bogus 2>&1); status=$?
    [ "$status" -eq 2 ] || fail "exit $status, want 2"
    grep -q "unknown argument '--bogus'" <<<"$output" || fail "no clear message: $output"
    grep -q "^usage: tools/test.sh" <<<"$output" || fail "no usage: $output"
    ;;
  missing-as-user)
    make_shims 1000 libgif-dev
    output=$(PATH="$shims:$PATH" bash -c "source '$source_dir/tools/deps.sh'; lethe_install_dependencies" 2>&1); status=$?
    [ "$status" -eq 2 ] || fail "exit $status, want 2: $output"
    grep -qx "  apt-get install -y libgif-dev" <<<"$output" || fail "no exact install line: $output"
    ;;
  all-present)
    make_shims 1000 none-missing
    output=$(PATH="$shims:$PATH" bash -c "source '$source_dir/tools/deps.sh'; lethe_install_dependencies" 2>&1); status=$?
    [ "$status" -eq 0 ] || fail "exit $status: $output"
    grep -q "all [0-9]* packages present" <<<"$output" || fail "unexpected: $output"
    ;;
  *) fail "unknown case $case_name" ;;
esac
echo "ok: $case_name"
