#!/bin/sh
# Installs the Debian packages sandbox-runner needs to build, test and run,
# asking apt only for what is missing.  Used by tools/setup.sh and
# tools/run-tests.sh; safe to run again.
set -eu

build="build-essential autoconf automake pkg-config
  libseccomp-dev libcap-dev libcjson-dev libsqlite3-dev libmnl-dev libarchive-dev
  libcurl4-openssl-dev libmicrohttpd-dev libmagic-dev libssl-dev libpcre2-dev libyaml-dev"
runtime="uidmap busybox-static ca-certificates"
tests="python3 bubblewrap mandoc xz-utils git procps psmisc nodejs strace bash-completion
  shellcheck systemd valgrind"
images="mmdebstrap debian-archive-keyring"
# bench/: the peers it compares with, and its charts
bench="runc crun gnuplot-nox"
extra=${SR_EXTRA_PACKAGES:-}

want=""
for pkg in $build $runtime $tests $images $bench $extra; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  case $status in
    *"install ok installed"*) ;;
    *) want="$want $pkg" ;;
  esac
done

# npm comes with nodesource's nodejs, as a package of its own with Debian's.
command -v npm >/dev/null 2>&1 || want="$want npm"

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
