#!/bin/sh
# The Docker daemon and images for the Docker backend's tests.
#
#   start-dockerd.sh start                  make sure a daemon answers: use the one
#                                           at $DOCKER_HOST (or the default socket) when
#                                           it runs, else start Debian's dockerd (root
#                                           only) and record that we did
#   start-dockerd.sh stop                   stop the daemon only if `start` started it
#   start-dockerd.sh import NAME ROOTFS     docker import of a rootfs directory as NAME
#   start-dockerd.sh import-oci NAME DIR    docker import of an OCI layout, its layers
#                                           flattened (the images rootfs/build-all.sh caches)
#
# Exit status 77 means "cannot run here" and stderr says why; the tests
# skip with that reason.  The daemon this script starts speaks on the
# default socket, keeps its data in /var/lib/docker, uses cgroupfs and
# overlay2, and sets up no bridge nor iptables: the tests run everything
# with network none, and a host without iptables must still work.
set -u

sock=/var/run/docker.sock
state=${SR_DOCKERD_STATE:-/run/sandbox-runner-test-dockerd.pid}
log=${SR_DOCKERD_LOG:-/var/log/sandbox-runner-test-dockerd.log}
wait_s=${SR_DOCKERD_WAIT:-60}

cannot () { echo "$*" >&2; exit 77; }

answers () {
  timeout 10 docker version --format '{{.Server.Version}}' >/dev/null 2>&1
}

start () {
  command -v docker >/dev/null || cannot "no docker client (apt-get install docker.io)"
  if answers; then
    echo "running"
    return 0
  fi
  case ${DOCKER_HOST:-unix://$sock} in
    "unix://$sock") ;;
    *) cannot "the Docker daemon at $DOCKER_HOST does not answer" ;;
  esac
  if [ -S "$sock" ] && [ "$(id -u)" -ne 0 ] && ! [ -r "$sock" -a -w "$sock" ]; then
    cannot "the Docker socket $sock is not accessible to uid $(id -u) (not in the docker group)"
  fi
  [ "$(id -u)" -eq 0 ] || cannot "no Docker daemon runs at $sock, and only root may start one"
  command -v dockerd >/dev/null || cannot "dockerd is not installed (apt-get install docker.io)"

  # A daemon of ours that died left its pid file and socket behind.
  if [ -f "$state" ] && ! kill -0 "$(cat "$state")" 2>/dev/null; then
    rm -f "$state" "$sock" /var/run/docker.pid
  fi
  if [ ! -f "$state" ]; then
    # setsid: the daemon must not die with the test's process group.
    setsid dockerd --host "unix://$sock" --pidfile /var/run/docker.pid \
      --exec-opt native.cgroupdriver=cgroupfs --storage-driver overlay2 \
      --iptables=false --ip6tables=false --bridge=none \
      >"$log" 2>&1 </dev/null &
    echo $! > "$state"
  fi
  i=0
  while ! answers; do
    if ! kill -0 "$(cat "$state")" 2>/dev/null; then
      rm -f "$state"
      cannot "dockerd could not start: $(grep -E 'level=(fatal|error)' "$log" | tail -1 | sed 's/.*msg=//')"
    fi
    i=$((i + 1))
    if [ "$i" -gt $((wait_s * 4)) ]; then
      stop >/dev/null
      cannot "dockerd did not answer within ${wait_s}s (log: $log)"
    fi
    sleep 0.25
  done
  echo "started $(cat "$state")"
}

stop () {
  [ -f "$state" ] || { echo "not ours"; return 0; }
  pid=$(cat "$state")
  kill "$pid" 2>/dev/null
  i=0
  while kill -0 "$pid" 2>/dev/null && [ "$i" -lt 60 ]; do
    sleep 0.25
    i=$((i + 1))
  done
  kill -9 "$pid" 2>/dev/null
  rm -f "$state"
  echo "stopped $pid"
}

# The environment an imported image needs: docker import sets none.
changes () {
  printf '%s\n' "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    "ENV LANG=C.UTF-8"
}

import_rootfs () {
  name=$1 root=$2
  [ -d "$root" ] || { echo "import: no directory $root" >&2; return 1; }
  tar -C "$root" --numeric-owner -cf - . |
    docker import -c "$(changes | sed -n 1p)" -c "$(changes | sed -n 2p)" - "$name" >/dev/null
}

import_oci () {
  name=$1 dir=$2
  [ -f "$dir/index.json" ] || cannot "no OCI layout at $dir (run rootfs/build-all.sh)"
  flat=$(mktemp) || return 1
  python3 "$(dirname "$0")/flatten-oci.py" "$dir" > "$flat" || {
    rm -f "$flat"
    cannot "cannot import $dir"
  }
  docker import -c "$(changes | sed -n 1p)" -c "$(changes | sed -n 2p)" "$flat" "$name" >/dev/null
  r=$?
  rm -f "$flat"
  return $r
}

case ${1:-} in
  start) start ;;
  stop) stop ;;
  import) import_rootfs "$2" "$3" ;;
  import-oci) import_oci "$2" "$3" ;;
  *) echo "usage: $0 start|stop|import NAME ROOTFS|import-oci NAME DIR" >&2; exit 2 ;;
esac
