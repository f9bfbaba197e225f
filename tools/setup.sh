#!/bin/sh
# The README's first command: on a fresh Debian 12 machine, as root, install
# what is missing, build and install sandbox-runner, prepare the default
# images and run a first command in a container.
set -eu

src=$(cd "$(dirname "$0")/.." && pwd)
build=${SR_BUILD_DIR:-$src/build}
prefix=${SR_PREFIX:-/usr/local}
jobs=$(nproc 2>/dev/null || echo 2)

# What building and running need, not the test and bench toolchain.
"$src/tools/deps.sh" build runtime images

cd "$src"
[ -x configure ] || autoreconf -fi
mkdir -p "$build"
cd "$build"
[ -f Makefile ] || "$src/configure" --prefix="$prefix" --sysconfdir=/etc --localstatedir=/var
make -j"$jobs"
make install

# The default images (python, cpp, python-data) from Debian packages,
# built once into /var/cache/sandbox-runner/images and imported into the
# store.
SR_BIN="$prefix/bin/sandbox-runner" "$src/rootfs/build-all.sh" --import
"$prefix/bin/sandbox-runner" image list

# The main job: a snippet in each language, each in fresh containers.
echo "Running a Python snippet:"
echo 'import platform; print("hello from Python", platform.python_version())' |
  "$prefix/bin/sandbox-runner" run-code --language python
echo "Compiling and running a C++ snippet:"
printf '%s\n' '#include <iostream>' \
  'int main() { std::cout << "hello from C++ " << __cplusplus << std::endl; }' |
  "$prefix/bin/sandbox-runner" run-code --language cpp
