#!/bin/sh
# The configuration as an operator drives it: a named file (--config,
# SANDBOX_CONFIG), the order default < files < environment < flags,
# unknown SANDBOX_* variables, no store made for a command that fails,
# and each language's Docker image.
. "${SR_SRCDIR}/tests/integration/lib.sh"
require_busybox_rootfs

use_private_dirs
user_file=$XDG_CONFIG_HOME/sandbox-runner/sandbox-runner.conf
named=$sr_tmp/named.conf

# --- a named file ---
echo "pids = 20" >"$user_file"
printf '# a file of my own\nmemory = 96M\n' >"$named"
run_sr --config "$named" config show
is "$rc" 0 "--config FILE before the command"
like "$out" "^memory += 96M +# config file \($named:2\)" "the named file's setting, with its line"
like "$out" "^pids += 64 +# default" "the user file is not read with --config"
run_sr --config="$named" config show
like "$out" "^memory += 96M +# config file" "--config=FILE"
SANDBOX_CONFIG=$named run_sr config show
like "$out" "^memory += 96M +# config file \($named:2\)" "SANDBOX_CONFIG names the file"
echo "memory = 32M" >"$sr_tmp/other.conf"
SANDBOX_CONFIG=$named run_sr --config "$sr_tmp/other.conf" config show
like "$out" "^memory += 32M +# config file" "--config wins over SANDBOX_CONFIG"
run_sr config show
like "$out" "^pids += 20 +# user file" "without either, the user file is read"

run_sr --config "$sr_tmp/missing.conf" config show
is "$rc" 125 "a missing named file stops the command"
like "$err" "config file $sr_tmp/missing.conf .*No such file" "naming the file"
SANDBOX_CONFIG=$sr_tmp/missing.conf run_sr run --rootfs "$ROOTFS" -- true
is "$rc" 125 "a missing SANDBOX_CONFIG file stops every command"
run_sr --config
is "$rc" 125 "--config without a file"
echo "bogus = 1" >"$sr_tmp/bad.conf"
run_sr --config "$sr_tmp/bad.conf" run --help
is "$rc" 0 "COMMAND --help after --config still shows the usage with a broken file"

# The light binary hands image import to sandbox-runner-full, which must
# read the same file.
echo "image_store = relative/store" >"$named"
run_sr --config "$named" image import --name x "$sr_tmp/nothing"
is "$rc" 125 "import with a named file"
like "$err" "image store relative/store: not an absolute path" \
  "the helper binary reads the file --config names"
rm "$user_file"

# --- default < files < environment < flags ---
echo "timeout = 3" >"$named"
SANDBOX_TIMEOUT=4 run_sr --config "$named" config show
like "$out" "^timeout += 4 +# environment \(SANDBOX_TIMEOUT\)" "the environment overrides the file"
SANDBOX_TIMEOUT=50 run_sr run --rootfs "$ROOTFS" --timeout 5 -- true
is "$rc" 0 "a --timeout flag overrides SANDBOX_TIMEOUT over max_timeout"
SANDBOX_TIMEOUT=50 run_sr run --rootfs "$ROOTFS" -- true
is "$rc" 125 "without the flag, that timeout is refused"
like "$err" "timeout 50 s must be above 0 and at most max_timeout 30 s" "naming the ceiling"
SANDBOX_TIMEOUT=50 run_sr run --rootfs "$ROOTFS" --timeout 40 -- true
is "$rc" 125 "a flag over the ceiling is refused"
like "$err" "--timeout 40 is over the ceiling of 30 seconds" "by the flag's name"
SANDBOX_SERVER_ID=host.example run_sr config show
is "$rc" 125 "a server_id a balancer cannot route by is refused by the configuration's checks"
like "$err" "server_id 'host\.example' is not 1 to 63 letters, digits, '-' or '_'" "naming it"
echo "max_timeout = 60" >"$named"
SANDBOX_TIMEOUT=50 run_sr --config "$named" run --rootfs "$ROOTFS" --timeout 55 -- true
is "$rc" 0 "the flag is checked against the ceiling of the merged layers"
SANDBOX_TIMEOUT=50 SANDBOX_IMAGE_STORE=$sr_tmp/no-store \
  run_sr run-code -l python --timeout 5 "$named"
unlike_timeout=$(printf '%s\n' "$err" | grep -c max_timeout)
is "$unlike_timeout" 0 "run-code: --timeout overrides SANDBOX_TIMEOUT too"

# --- unknown SANDBOX_* variables ---
SANDBOX_MEMROY=1G run_sr config show
is "$rc" 0 "an unknown variable is not an error"
like "$err" "warning: unknown variable SANDBOX_MEMROY ignored \(did you mean SANDBOX_MEMORY\?\)" \
  "it is warned about, with the nearest name"
is "$(printf '%s\n' "$err" | grep -c SANDBOX_MEMROY)" 1 "once"
SANDBOX_MEMROY=1G DOCKER_HOST=unix://$sr_tmp/no-daemon.sock \
  run_sr run-code --backend docker -l python "$named"
is "$(printf '%s\n' "$err" | grep -c SANDBOX_MEMROY)" 1 \
  "once when the command is handed to sandbox-runner-full after reading the config"
SANDBOX_MEMROY=1G run_sr image import --name x "$sr_tmp/nothing"
is "$(printf '%s\n' "$err" | grep -c SANDBOX_MEMROY)" 1 "once when it is handed over before"
SANDBOX_FROBNICATOR=1 run_sr config show
like "$err" "unknown variable SANDBOX_FROBNICATOR ignored$" "a name far from any is warned about alone"
SANDBOX_DOCKER_IMAGE_PYTHON=python:3.13 SANDBOX_RUNNER_URL=http://127.0.0.1:1 \
  SANDBOX_LANGUAGE_PYTHON_DESCRIPTION=py SANDBOX_CONFIG=$named run_sr config show
is "$err" "" "the variables the project reads are not warned about"

# --- mcp-code-sandbox's variables, as its users' client configs set them ---
SANDBOX_MEMORY_LIMIT=1g SANDBOX_CPU_LIMIT=1.0 SANDBOX_EXEC_TIMEOUT_S=60 SANDBOX_SESSION_TTL_M=30 \
  SANDBOX_MAX_UPLOAD_BYTES=52428800 SANDBOX_MAX_OUTPUT_BYTES=102400 SANDBOX_MAX_CODE_BYTES=102400 \
  SANDBOX_HTTP_HOST=0.0.0.0 SANDBOX_HTTP_PORT=8081 SANDBOX_IMAGE=python-data \
  SANDBOX_LOG_FILE=$sr_tmp/sandbox.log run_sr config show
is "$rc" 0 "mcp-code-sandbox's variables are accepted"
is "$err" "" "and not warned about"
like "$out" "^memory += 1G +# environment \(SANDBOX_MEMORY_LIMIT\)" "SANDBOX_MEMORY_LIMIT=1g is 1G, not the default"
like "$out" "^cpus += 1 +# environment \(SANDBOX_CPU_LIMIT\)" "SANDBOX_CPU_LIMIT"
like "$out" "^timeout += 60 +# environment \(SANDBOX_EXEC_TIMEOUT_S\)" "SANDBOX_EXEC_TIMEOUT_S"
like "$out" "^session_idle_timeout += 1800 +# environment \(SANDBOX_SESSION_TTL_M\)" \
  "SANDBOX_SESSION_TTL_M, in minutes"
like "$out" "^max_upload_size += 50M +# environment \(SANDBOX_MAX_UPLOAD_BYTES\)" "SANDBOX_MAX_UPLOAD_BYTES"
like "$out" "^max_output += 100K +# environment \(SANDBOX_MAX_OUTPUT_BYTES\)" "SANDBOX_MAX_OUTPUT_BYTES"
like "$out" "^max_code_size += 100K +# environment \(SANDBOX_MAX_CODE_BYTES\)" "SANDBOX_MAX_CODE_BYTES"
like "$out" "^listen += 0\.0\.0\.0:8081 +# environment \(SANDBOX_HTTP_HOST, SANDBOX_HTTP_PORT\)" \
  "SANDBOX_HTTP_HOST and SANDBOX_HTTP_PORT make listen"
like "$out" "^session_image += python-data +# environment \(SANDBOX_IMAGE\)" "SANDBOX_IMAGE"
like "$out" "^log_file += $sr_tmp/sandbox.log +# environment \(SANDBOX_LOG_FILE\)" \
  "SANDBOX_LOG_FILE, our own name too"
SANDBOX_MEMORY_LIMIT=1g SANDBOX_MEMORY=128M run_sr config show
like "$out" "^memory += 128M +# environment \(SANDBOX_MEMORY; SANDBOX_MEMORY_LIMIT ignored\)" \
  "our name wins over the alias, and config show says so"
like "$err" "warning: SANDBOX_MEMORY_LIMIT ignored for memory: SANDBOX_MEMORY is set" "with a warning"
SANDBOX_MEMORY_LIMIT=1g SANDBOX_MEMORY=128M DOCKER_HOST=unix://$sr_tmp/no-daemon.sock \
  run_sr run-code --backend docker -l python "$named"
is "$(printf '%s\n' "$err" | grep -c SANDBOX_MEMORY_LIMIT)" 1 \
  "once when the command is handed to sandbox-runner-full"
SANDBOX_MEMORY_LIMIT=lots run_sr config show
[ "$rc" -ne 0 ]; ok $? "a bad alias value is an error"
like "$err" "SANDBOX_MEMORY_LIMIT" "naming the alias"

# --- no store made for a command that fails ---
typo=$sr_tmp/typo/store
SANDBOX_IMAGE_STORE=$typo run_sr image list
is "$rc" 0 "image list of a missing store"
SANDBOX_IMAGE_STORE=$typo run_sr image rm nope
is "$rc" 125 "image rm in a missing store fails"
like "$err" "image store $typo does not exist" "saying the store does not exist"
SANDBOX_IMAGE_STORE=$typo run_sr run --image nope -- true
is "$rc" 125 "run --image with a missing store fails"
SANDBOX_IMAGE_STORE=$typo run_sr run-code -l python "$named"
is "$rc" 125 "run-code with a missing store fails"
like "$err" "image store $typo does not exist" "saying so"
SANDBOX_IMAGE_STORE=$typo run_sr doctor
SANDBOX_IMAGE_STORE=$typo SANDBOX_HISTORY_DB=$sr_tmp/typo2/history.db run_sr history
ok "$([ ! -e "$sr_tmp/typo" ] && [ ! -e "$sr_tmp/typo2" ]; echo $?)" \
  "none of them made the store or the history's directory"

# --- each language's Docker image ---
run_sr config show
like "$out" '^language\.python\.docker_image = "python:3\.12-slim" +# default' \
  "config show shows python's Docker image"
like "$out" '^language\.cpp\.docker_image = "gcc:14" +# default' "and cpp's"
echo "language.cpp.docker_image = gcc:13" >"$named"
run_sr --config "$named" config show
like "$out" '^language\.cpp\.docker_image = "gcc:13" +# config file' "the file sets it"
SANDBOX_DOCKER_IMAGE_CPP=gcc:12 run_sr --config "$named" config show
like "$out" '^language\.cpp\.docker_image = "gcc:12" +# environment \(SANDBOX_DOCKER_IMAGE_CPP\)' \
  "SANDBOX_DOCKER_IMAGE_<NAME> overrides it"
run_sr config show --json
is "$(printf '%s' "$out" | python3 -c 'import json, sys; print(json.load(sys.stdin)["languages"]["python"]["docker_image"])' 2>/dev/null)" \
  "python:3.12-slim" "config show --json has it"

SANDBOX_HISTORY_DB='postgresql://runner:s3cret@db1/runs' run_sr config show
like "$out" 'history_db += postgresql://runner:\*\*\*@db1/runs ' \
  "config show hides the password of a PostgreSQL history_db"
SANDBOX_HISTORY_DB='host=db1 password=s3cret' run_sr config show --json
like "$out" '"value":[[:space:]]*"host=db1 password=\*\*\*"' "and so does --json"

done_testing
