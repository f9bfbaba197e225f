#!/bin/sh
# Prints contrib/haproxy/sandbox-runner.cfg made for servers on loopback:
# HAProxy on 127.0.0.1:HPORT, its stats socket at SOCK and its log on
# stdout, checks every 300 ms, and host-a-8080, host-b-8080, host-c-8080
# (the file's server names, which the servers take as their server_id)
# on 127.0.0.1 at the PORTs given, in that order; the servers without a
# port are left out.  For tests/integration/fleet.sh and bench/fleet.sh.
#   haproxy-cfg.sh HPORT SOCK PORT [PORT [PORT]]
set -eu
[ $# -ge 3 ] || { echo "usage: haproxy-cfg.sh HPORT SOCK PORT [PORT [PORT]]" >&2; exit 2; }
hport=$1 sock=$2
shift 2
script="s/^    bind :8080/    bind 127.0.0.1:$hport/
s|^    log /dev/log local0|    log stdout format raw local0\\n    stats socket $sock mode 600|
s/check inter 2s fall 2 rise 2/check inter 300ms fall 1 rise 1/"
for name in a b c; do
  if [ $# -gt 0 ]; then
    script="$script
s/host-$name\\.example:8080/127.0.0.1:$1/"
    shift
  else
    script="$script
/^    server host-$name-8080 /d"
  fi
done
sed "$script" "$(dirname "$0")/../../contrib/haproxy/sandbox-runner.cfg"
