#!/bin/sh
# env's Docker lifecycle (run, ps, stop, start, restart, logs, stats,
# inspect, remove) through the official MCP client, on a real dockerd
# (tests/docker/start-dockerd.sh) beside a container the test starts
# itself, which the server must neither list nor touch, nor one HTTP
# client another's; and on the native backend, every Docker action
# refused with docker_unavailable.
. "${SR_SRCDIR}/tests/integration/lib.sh"
require_image python
require_node_modules
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db

run_client () {
  (cd "$NODE_DIR" && timeout 300 "$NODE" env-docker-client.mjs "$SR_BIN" "$@") \
    > "$sr_tmp/client.out" 2>"$sr_tmp/client.err"
  is "$?" 0 "the SDK client ${1:-on docker} ends cleanly"
  relay_results < "$sr_tmp/client.out"
  grep -v '^RESULT' "$sr_tmp/client.err" | tail -5 | sed 's/^/# stderr: /'
}

export SANDBOX_BACKEND=native
run_client --native

if ! start_dockerd_python; then
  echo "# skip the Docker part: $(cat "$sr_tmp/dockerd.err")"
  done_testing
  exit $?
fi
ours () { docker ps -aq --filter label=org.sandbox-runner.session | wc -l; }
ours_before=$(ours)
FOREIGN=sr-env-foreign-$$
export FOREIGN
docker run -d --network none --name "$FOREIGN" python:3.12-slim sleep 600 >/dev/null ||
  echo "Bail out! could not start the foreign container"
at_exit "docker rm -f $FOREIGN >/dev/null 2>&1"

export SANDBOX_BACKEND=docker
run_client
# Over HTTP, each MCP session an owner of its own.
run_owners_client env-docker-client.mjs
is "$(docker inspect -f '{{.State.Running}}' "$FOREIGN")" true "the foreign container still runs"
is "$(ours)" "$ours_before" "no container of ours is left"
done_testing
