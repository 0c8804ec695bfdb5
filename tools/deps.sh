# Sourced by tools/test.sh and tools/demo.sh: the Debian packages Lethe needs, and the install step.
# Each later issue that adds a dependency adds its package here (and to LetheConfig.cmake/lethe.pc).
LETHE_PACKAGES=(
  # toolchain
  cmake ninja-build g++ pkg-config clang-14 libclang-rt-14-dev
  # codecs, storage, compression
  libpng-dev libjpeg62-turbo-dev libgif-dev libsqlite3-dev zlib1g-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev python3 sqlite3 git strace
  # peers for the allocator benchmark
  libjemalloc2 libmimalloc2.0 libtcmalloc-minimal4
  # engine: page descriptions, HTML and CSS (litehtml, which brings gumbo), fonts, text shaping
  nlohmann-json3-dev liblitehtml-dev libgumbo-dev libfreetype-dev libharfbuzz-dev fonts-dejavu-core
)

# Installs what is missing. As root: apt-get (non-interactive). Otherwise prints the exact
# command and exits 2. Quick when everything is present (one dpkg-query).
lethe_install_dependencies() {
  local missing=()
  local status
  for package in "${LETHE_PACKAGES[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null || true)
    [ "$status" = "installed" ] || missing+=("$package")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "dependencies: all ${#LETHE_PACKAGES[@]} packages present"
    return 0
  fi
  if [ "$(id -u)" -ne 0 ]; then
    echo "missing packages: ${missing[*]}" >&2
    echo "install them as root with:" >&2
    echo "  apt-get install -y ${missing[*]}" >&2
    exit 2
  fi
  echo "dependencies: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || { echo "apt-get update failed" >&2; exit 1; }
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    { echo "apt-get install failed: ${missing[*]}" >&2; exit 1; }
}
