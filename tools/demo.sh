#!/usr/bin/env bash
# The main job: installs missing packages (root), builds the release preset and runs the standalone
# image-cache demo (lethe-demo) on the sample site the build generates. Extra arguments go to the
# demo (e.g. a directory of your own images).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source tools/deps.sh

usage() { echo "usage: tools/demo.sh [DIR] [--out DIR] [--cap-mb N]   (DIR: your own images instead of the sample site)"; }
# Flags are checked before the build, so that a typo costs no release build; lethe-demo checks values.
previous=""
for argument in "$@"; do
  case "$previous:$argument" in
    --out:*|--cap-mb:*) ;;
    *:-h|*:--help) usage; exit 0 ;;
    *:--out|*:--cap-mb) ;;
    *:-*) echo "tools/demo.sh: unknown flag '$argument'" >&2; usage >&2; exit 2 ;;
  esac
  previous=$argument
done

lethe_install_dependencies
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"

bin=build/release/tools
if [ -x "$bin/demo/lethe-demo" ]; then
  exec "$bin/demo/lethe-demo" "$@"
fi
if [ -x "$bin/decode/lethe-decode" ]; then
  echo "lethe-demo is not built yet; running lethe-decode, the most complete tool so far, on the corpus."
  shopt -s nullglob
  files=("${@:-../shared/corpus/animated/gif}")
  exec "$bin/decode/lethe-decode" $(find "${files[@]}" -type f \( -name '*.gif' -o -name '*.png' -o -name '*.jp*g' \) | sort | head -n 40)
fi
echo "No demo tool is built yet: lethe-demo arrives with the cache issue. Nothing to run." >&2
exit 1
