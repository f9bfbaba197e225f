#!/bin/sh
# A server clones its containers' processes from its spawner, a process
# it forks before its first thread (runtime/spawner.h): they are the
# server's children all the same and named as before, but copies of the
# spawner's few pages, not of the server's.  A server whose spawner is
# gone clones them itself; the spawner goes with its server.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run
require_image python
containers=$SANDBOX_RUNTIME_DIR/containers

init_msg='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
initialized='{"jsonrpc":"2.0","method":"notifications/initialized"}'
# run ID CODE: a run_code call of python CODE.
run () {
  printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"run_code","arguments":{"language":"python","code":"%s"}}}\n' "$1" "$2" >&3
}
answered () { grep -q "\"id\":$1," "$sr_tmp/out"; }
answer () { grep "\"id\":$1," "$sr_tmp/out"; }
# spawner_of PID: the pid of PID's child named sr-spawner, if any: the
# oldest, as a child the spawner has just cloned bears its name until it
# takes the server's.
spawner_of () {
  for p in $(pgrep -P "$1"); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = sr-spawner ] &&
      echo "$(awk '{ print $22 }' "/proc/$p/stat" 2>/dev/null) $p"
  done | sort -n | head -1 | cut -d' ' -f2
}
gone () { ! kill -0 "$1" 2>/dev/null; }
# inits_of PID: PID's other children, its containers' inits (a warm
# container's too).
inits_of () {
  for p in $(pgrep -P "$1"); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = sr-spawner ] || echo "$p"
  done
}
ppid_of () { awk '/^PPid:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
# start_stdio: a stdio server on a fifo held on fd 3, initialized.
start_stdio () {
  rm -f "$sr_tmp/in"
  mkfifo "$sr_tmp/in"
  "$SR_BIN" serve <"$sr_tmp/in" >"$sr_tmp/out" 2>"$sr_tmp/err" &
  server=$!
  exec 3>"$sr_tmp/in"
  printf '%s\n' "$init_msg" "$initialized" >&3
  wait_until 30 answered 0
}

start_stdio
spawner=$(spawner_of "$server")
[ -n "$spawner" ]; ok $? "a stdio server has a spawner"
is "$(ppid_of "$spawner")" "$server" "which is the server's child"

run 1 'import time; time.sleep(4); print(1)'
has_inits () { [ -n "$(inits_of "$server")" ]; }
wait_until 30 has_inits
init=$(inits_of "$server" | head -1)
[ -n "$init" ]; ok $? "the server's containers start (init $init)"
is "$(cat "/proc/$init/comm" 2>/dev/null)" "$(cat "/proc/$server/comm")" "an init is named as the server is"
# A copy of the server would map its threads' stack guards (PROT_NONE),
# made after the spawner; a copy of the spawner maps what it does.
guards () { grep -c -- '---p' "/proc/$1/maps" 2>/dev/null; }
maps_readable=""
if [ -n "$(guards "$init")" ]; then
  maps_readable=yes
  [ "$(guards "$init")" -eq "$(guards "$spawner")" ] && [ "$(guards "$init")" -lt "$(guards "$server")" ]
  ok $? "an init maps the spawner's areas, not the server's threads' ($(guards "$init") PROT_NONE areas, spawner $(guards "$spawner"), server $(guards "$server"))"
else
  skip "an init maps the spawner's areas, not the server's threads': an init's maps are closed to this user"
fi
wait_until 30 answered 1
like "$(answer 1)" '"status":"success"' "the run succeeds"

# The spawner killed: the server clones for itself from then on.
spawner_was=$(guards "$spawner")
kill -KILL "$spawner"
wait_until 10 gone "$spawner"
run 2 'print(2)'
wait_until 30 answered 2
like "$(answer 2)" '"stdout":"2\\n"' "with its spawner killed, the server still runs code"
# The first clone after the kill finds it gone: run 2's own, or the
# pool's refill after run 2 took the warm container.
logged_gone () { grep -q spawner_gone "$sr_tmp/err"; }
wait_until 30 logged_gone
ok $? "and logs that its spawner is gone"
run 3 'import time; time.sleep(4); print(3)'
# An init the server cloned itself: a copy of the server, with its
# threads' stack guards.  (Inits the spawner made before it died may
# still be about.)
server_clone () {
  for p in $(inits_of "$server"); do
    [ "$(guards "$p")" -gt "$spawner_was" ] 2>/dev/null && return 0
  done
  return 1
}
if [ -n "$maps_readable" ]; then
  wait_until 30 server_clone
  ok $? "an init is then a copy of the server, which cloned it (the spawner had $spawner_was PROT_NONE areas)"
else
  skip "an init is then a copy of the server: an init's maps are closed to this user"
fi
wait_until 30 answered 3
like "$(answer 3)" '"stdout":"3\\n"' "and runs"
is "$(spawner_of "$server")" "" "no spawner is made again"
exec 3>&-
wait "$server"
is "$?" 0 "the server ends cleanly"
server=""

# The spawner ends with its server, on a clean stop or a kill.
start_stdio
spawner=$(spawner_of "$server")
exec 3>&-
wait "$server"
server=""
wait_until 10 gone "$spawner"
ok $? "the spawner ends with its server's end"
start_stdio
spawner=$(spawner_of "$server")
run 4 'import time; time.sleep(30)'
wait_until 30 has_inits
init=$(inits_of "$server" | head -1)
kill -KILL "$server"
wait "$server" 2>/dev/null
server=""
exec 3>&-
wait_until 10 gone "$spawner"
ok $? "a killed server's spawner goes too"
wait_until 10 gone "$init"
ok $? "and so does the init it cloned"
printf '%s\n' "$init_msg" | timeout 20 "$SR_BIN" serve >/dev/null 2>&1
[ -z "$(ls "$containers" 2>/dev/null)" ]; ok $? "the next start reclaims what the killed server left"

# The HTTP server has one too.
start_server
ok $? "serve --transport http listens"
spawner=$(spawner_of "$server")
[ -n "$spawner" ]; ok $? "the HTTP server has a spawner"
stop_server
wait_until 10 gone "$spawner"
ok $? "which ends with it"

done_testing
