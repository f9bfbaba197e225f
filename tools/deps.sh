#!/bin/sh
# Installs the Debian packages sandbox-runner needs, by group, asking apt
# only for what is missing; safe to run again.
#   tools/deps.sh [--list] [GROUP...]
# GROUP: build, runtime, images (what tools/setup.sh installs on a host
# that runs it), tests and bench (what tools/run-tests.sh adds); none:
# every group.  --list prints the packages of the groups and installs
# nothing.
set -eu

build="build-essential autoconf automake pkg-config
  libseccomp-dev libcap-dev libcjson-dev libsqlite3-dev libarchive-dev
  libcurl4-openssl-dev libmicrohttpd-dev libmagic-dev libssl-dev libpcre2-dev libyaml-dev
  libpq-dev"
runtime="uidmap ca-certificates"
# busybox-static: the tests' rootfs; debhelper, fakeroot and lintian: the
# .deb that tests/integration/deb.sh builds and checks; postgresql: the
# server tests/integration/history-pg.sh starts; haproxy: the balancer in
# front of tests/integration/fleet.sh's servers.
tests="python3 bubblewrap busybox-static mandoc xz-utils git procps psmisc nodejs strace
  bash-completion shellcheck systemd valgrind debhelper fakeroot lintian postgresql haproxy"
# python3: rootfs/layer-diff.py, which makes the images' shared layers.
images="mmdebstrap debian-archive-keyring python3"
# bench/: the peers it compares with, and its charts
bench="runc crun gnuplot-nox"
extra=${SR_EXTRA_PACKAGES:-}

list=no
if [ "${1:-}" = --list ]; then
  list=yes
  shift
fi
[ $# -gt 0 ] || set -- build runtime images tests bench
pkgs=""
for group in "$@"; do
  case $group in
    build) pkgs="$pkgs $build" ;;
    runtime) pkgs="$pkgs $runtime" ;;
    images) pkgs="$pkgs $images" ;;
    tests) pkgs="$pkgs $tests npm" ;;
    bench) pkgs="$pkgs $bench" ;;
    *) echo "tools/deps.sh: unknown group '$group' (build, runtime, images, tests, bench)" >&2
      exit 2 ;;
  esac
done
if [ "$list" = yes ]; then
  # shellcheck disable=SC2086
  printf '%s\n' $pkgs $extra
  exit 0
fi

want=""
for pkg in $pkgs $extra; do
  [ "$pkg" = npm ] && continue
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  case $status in
    *"install ok installed"*) ;;
    *) want="$want $pkg" ;;
  esac
done

# npm comes with nodesource's nodejs, as a package of its own with Debian's.
case " $pkgs " in
  *" npm "*) command -v npm >/dev/null 2>&1 || want="$want npm" ;;
esac

if [ -n "$want" ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "tools/deps.sh: missing packages:$want (run as root to install them)" >&2
    exit 1
  fi
  echo "tools/deps.sh: installing$want"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  # shellcheck disable=SC2086
  apt-get install -y -q --no-install-recommends $want
fi
