#!/bin/sh
# Machines through the official MCP client: a sandbox session and an SSH
# host (a real sshd on loopback, tests/integration/sshd.sh) at once, with
# shells on each, env, machine_list, default_set and the file tools'
# machine argument; then what is left on the remote side.
# mcp-machines-docker.sh runs it with backend=docker (SR_MACHINES_BACKEND):
# the session is then a Docker container, beside the same SSH host.
. "${SR_SRCDIR}/tests/integration/lib.sh"
backend=${SR_MACHINES_BACKEND:-native}
require_image python
require_node_modules
if [ "$backend" = docker ]; then
  require_dockerd
  docker_image_from_cache python python:3.12-slim
fi
export SANDBOX_BACKEND=$backend
. "${SR_SRCDIR}/tests/integration/sshd.sh"

export SANDBOX_RUNTIME_DIR=$d/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
{ ssh_target box "$d/known_hosts"; ssh_target bad "$d/wrong_known_hosts"
  ssh_target new "$d/empty_known_hosts"; } > "$d/conf"
export SANDBOX_CONFIG=$d/conf
# The remote side is this host: what the client leaves there.
export MACHINES_DIR=$sr_tmp/remote
mkdir -p "$MACHINES_DIR"
echo "the host" > "$MACHINES_DIR/host-only"
export MACHINES_FILE=sr-machines-test-$$.txt
at_exit "rm -f /root/$MACHINES_FILE"
shell_files () { ls /tmp/.sr-shell-box-* 2>/dev/null | wc -l; }
shell_files_before=$(shell_files)

# The sandbox sessions' containers.
containers () {
  if [ "$backend" = docker ]; then
    docker ps -aq --filter label=org.sandbox-runner.session | wc -l
  else
    ls "$SANDBOX_RUNTIME_DIR/containers" 2>/dev/null | wc -l
  fi
}
containers_before=$(containers)

# Watch the big file as the client writes it on the remote: temp +
# rename means it is never seen partly written.
( while [ ! -e "$sr_tmp/done" ]; do stat -c %s "$MACHINES_DIR/big" 2>/dev/null; done ) \
  | sort -u > "$sr_tmp/sizes" &
watcher=$!
run_mcp_client machines-client.mjs
touch "$sr_tmp/done"
wait $watcher
is "$(tr '\n' ' ' < "$sr_tmp/sizes")" "1048576 " "file_write on the SSH host is atomic: never seen partly written"
is "$(ls -A "$MACHINES_DIR" | grep -c '^\.sr-tmp-')" 0 "no temp file is left on the remote side"
is "$(pgrep -f 'sleep 100\.456' | wc -l)" 0 "the remote command ^C interrupted is gone"
is "$(shell_files)" "$shell_files_before" "the SSH host's shells left no file in its /tmp"
is "$(pgrep -f "$d/run/ssh" | wc -l) $(ls -A "$d/run/ssh" 2>/dev/null | wc -l)" "0 0" \
  "no ssh process nor socket is left after close"
is "$(containers)" "$containers_before" "no container is left after the server exits"
if [ "$backend" = docker ]; then done_testing; exit $?; fi
# Over HTTP without tokens, each MCP session is an owner of its own.
run_owners_client machines-client.mjs
is "$(pgrep -f "$d/run/ssh" | wc -l)" 0 "no ssh process is left"
done_testing
