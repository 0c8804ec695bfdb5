#!/usr/bin/env bash
# The main job: installs missing packages (root), builds the release preset and runs the standalone
# image-cache demo (lethe-demo) on the sample site the build generates. Extra arguments go to the
# demo (e.g. a directory of your own images).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source tools/deps.sh

case "${1:-}" in
  -h|--help) echo "usage: tools/demo.sh [DIR]   (DIR: your own images instead of the sample site)"; exit 0 ;;
esac

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
