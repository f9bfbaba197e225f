#!/bin/sh
# The README's first command: on a fresh Debian 12 machine, as root, install
# what is missing, build and install sandbox-runner, prepare the default
# images and run a first command in a container.
set -eu

src=$(cd "$(dirname "$0")/.." && pwd)
build=${SR_BUILD_DIR:-$src/build}
prefix=${SR_PREFIX:-/usr/local}
jobs=$(nproc 2>/dev/null || echo 2)

"$src/tools/deps.sh"

cd "$src"
[ -x configure ] || autoreconf -fi
mkdir -p "$build"
cd "$build"
[ -f Makefile ] || "$src/configure" --prefix="$prefix" --sysconfdir=/etc --localstatedir=/var
make -j"$jobs"
make install

if [ -x "$src/rootfs/build-all.sh" ]; then
  "$src/rootfs/build-all.sh" --import
fi

# The main job: a first command in a fresh container.
demo=$(mktemp -d /tmp/sandbox-runner-demo.XXXXXX)
trap 'rm -rf "$demo"' EXIT
mkdir -p "$demo"/bin "$demo"/work "$demo"/mnt/data "$demo"/scratch "$demo"/proc "$demo"/sys \
  "$demo"/dev "$demo"/tmp
cp /bin/busybox "$demo"/bin/busybox
ln -s busybox "$demo"/bin/sh
echo "Running a first command in a container:"
"$prefix/bin/sandbox-runner" run --rootfs "$demo" -- \
  /bin/busybox sh -c 'echo "hello from pid $$ on $(/bin/busybox hostname)"'
if "$prefix/bin/sandbox-runner" image list >/dev/null 2>&1; then
  "$prefix/bin/sandbox-runner" image list
fi
