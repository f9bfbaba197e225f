#!/bin/bash
# The operator's documentation stays true to the code: the bash completion
# completes every subcommand and flag the binary has, sandbox-runner(1)
# documents them, sandbox-runner.conf(5) every setting that `config show`
# prints (with its default), sandbox-runner-mcp(7) every tool that
# tools/list returns (with its arguments and result fields) and every
# error code a refused call carries, and the systemd unit verifies.
. "${SR_SRCDIR}/tests/integration/lib.sh"

man1=$SR_SRCDIR/man/sandbox-runner.1
man5=$SR_SRCDIR/man/sandbox-runner.conf.5
man7=$SR_SRCDIR/man/sandbox-runner-mcp.7
completion=$SR_SRCDIR/contrib/bash-completion/sandbox-runner
unit=$SR_SRCDIR/contrib/systemd/sandbox-runner-http.service
bash_completion=/usr/share/bash-completion/bash_completion

# Nothing of the host's configuration or stores: what config show prints
# is the built-in defaults, and the images are those made here.
export SANDBOX_IMAGE_STORE=$sr_tmp/store SANDBOX_RUNTIME_DIR=$sr_tmp/run
export XDG_CONFIG_HOME=$sr_tmp/config
for v in $(env | sed -n 's/^\(SANDBOX_[A-Z_]*\)=.*/\1/p'); do
  case $v in
    SANDBOX_IMAGE_STORE | SANDBOX_IMAGE_STORES_READONLY | SANDBOX_RUNTIME_DIR | SANDBOX_HISTORY_DB) ;;
    *) unset "$v" ;;
  esac
done

have_python=0
command -v python3 >/dev/null && have_python=1
have_bc=0
[ -r "$bash_completion" ] &&
  bash --norc --noprofile -c ". '$bash_completion' && declare -F _init_completion" >/dev/null 2>&1 &&
  have_bc=1

# complete [--bc] WORD...: what the completion offers for the command line
# WORD... (the last word is the one being completed), one a line.  --bc
# loads bash-completion first, as an interactive shell would.  $LINE, when
# set, is COMP_LINE (for words that bash splits at ':').
complete_words () {
  local lib=""
  if [ "$1" = --bc ]; then
    lib=$bash_completion
    shift
  fi
  bash --norc --noprofile -c '
    lib=$1 script=$2
    shift 2
    if [ -n "$lib" ]; then . "$lib" || exit 3; fi
    . "$script" || exit 4
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    COMP_LINE=${LINE:-$*}
    COMP_POINT=${#COMP_LINE}
    _sandbox_runner
    printf "%s\n" "${COMPREPLY[@]}"' complete "$lib" "$completion" "$@" 2>"$sr_tmp/complete.err"
}

# missing_from LIST WORD...: the words not among LIST's lines.
missing_from () {
  local list=$1 w out=""
  shift
  for w in "$@"; do
    printf '%s\n' "$list" | grep -qxF -- "$w" || out="$out $w"
  done
  printf '%s' "${out# }"
}

# has_all LIST NAME WORD...: one check that LIST holds every WORD.
has_all () {
  local list=$1 name=$2 missing
  shift 2
  missing=$(missing_from "$list" "$@")
  is "$missing" "" "$name"
}

# The long and short flags a help text names.
help_flags () {
  "$SR_BIN" "$@" --help 2>&1 | grep -oE -- '(^|[ [,|])--?[a-z][a-z-]*' | sed 's/^[ [,|]//' |
    grep -v -- '^-[a-z][a-z]' | grep -vx -- -h | sort -u
}

# --- the completion script itself ---

bash -n "$completion"
ok $? "the completion script parses"
if command -v shellcheck >/dev/null; then
  shellcheck -s bash "$completion" >"$sr_tmp/sc" 2>&1
  ok $? "the completion script is shellcheck clean" || sed 's/^/#   /' "$sr_tmp/sc"
else
  skip "shellcheck is not installed"
fi

modes=(plain)
[ "$have_bc" -eq 1 ] && modes+=(--bc)
[ "$have_bc" -eq 1 ] || skip "bash-completion is not installed: completion tested without it only"

# --- subcommands ---

commands=$("$SR_BIN" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
like "$commands" "run" "--help lists the subcommands"
for mode in "${modes[@]}"; do
  m=${mode#plain}
  offered=$(complete_words ${m:+"$m"} "$SR_BIN" "")
  # shellcheck disable=SC2086
  has_all "$offered" "completion${m:+ with bash-completion} offers every subcommand of --help" \
    $commands
  # shellcheck disable=SC2086
  is "$(missing_from "$commands" $offered)" "" \
    "completion${m:+ with bash-completion} offers no subcommand that --help lacks"
  is "$(complete_words ${m:+"$m"} "$SR_BIN" run-)" "run-code" "'run-' completes to run-code${m:+ (bash-completion)}"
  is "$(complete_words ${m:+"$m"} "$SR_BIN" --v)" "--version" "'--v' completes to --version${m:+ (bash-completion)}"
done
undocumented=""
for cmd in $commands; do
  grep -Eq "^\.Ss $cmd( |\$)" "$man1" || undocumented="$undocumented $cmd"
done
is "${undocumented# }" "" "sandbox-runner(1) has a section for every subcommand"

# --- flags: every flag of each help text is completed and documented ---

# "help words|completion words": every subcommand, and the subcommands of
# image and config.
flag_cases=()
for cmd in $commands; do
  case $cmd in
    image | config) ;;
    *) flag_cases+=("$cmd|$cmd") ;;
  esac
done
flag_cases+=("config|config show" "image import|image import" "image pull|image pull"
  "image list|image list")
# session's own subcommands, each with its flags.
if printf '%s\n' "$commands" | grep -qx session; then
  for sub in $("$SR_BIN" session --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p'); do
    flag_cases+=("session $sub|session $sub")
  done
fi
for c in "${flag_cases[@]}"; do
  help=${c%%|*}
  words=${c#*|}
  # shellcheck disable=SC2086
  flags=$(help_flags $help)
  # kill takes names only.
  [ -n "$flags" ] || continue
  for mode in "${modes[@]}"; do
    m=${mode#plain}
    # shellcheck disable=SC2086
    offered=$(complete_words ${m:+"$m"} "$SR_BIN" $words -)
    # shellcheck disable=SC2086
    has_all "$offered" "'$words -' completes every flag of '$help --help'${m:+ (bash-completion)}" \
      $flags
  done
  undocumented=""
  for f in $flags; do
    case $f in
      --help) ;;
      --*) grep -qF -- "Fl \\-${f#--}" "$man1" || undocumented="$undocumented $f" ;;
    esac
  done
  is "${undocumented# }" "" "sandbox-runner(1) documents every long flag of '$help --help'"
done

# --- values ---

for mode in "${modes[@]}"; do
  m=${mode#plain}
  is "$(complete_words ${m:+"$m"} "$SR_BIN" serve --transport "" | sort | tr '\n' ' ')" "http sse stdio " \
    "--transport completes to its three values${m:+ (bash-completion)}"
  is "$(complete_words ${m:+"$m"} "$SR_BIN" serve --transport=h)" "http" \
    "--transport=h completes the value${m:+ (bash-completion)}"
  is "$(complete_words ${m:+"$m"} "$SR_BIN" history --status c | tr '\n' ' ')" "compile_error cancelled " \
    "--status completes to the statuses${m:+ (bash-completion)}"
  offered=$(SANDBOX_LANGUAGE_SH_IMAGE=busybox SANDBOX_LANGUAGE_SH_SOURCE=main.sh \
    SANDBOX_LANGUAGE_SH_RUN='sh /scratch/main.sh' complete_words ${m:+"$m"} "$SR_BIN" run-code -l "")
  has_all "$offered" "--language completes to the configured languages${m:+ (bash-completion)}" \
    python cpp sh
done

mkdir -p "$sr_tmp/pick-dir"
: >"$sr_tmp/pick-file"
is "$(complete_words "$SR_BIN" run --rootfs "$sr_tmp/pick-")" "$sr_tmp/pick-dir" \
  "--rootfs completes directories only"
is "$(complete_words "$SR_BIN" run --rootfs "$sr_tmp" -- "$sr_tmp/pick-")" "" \
  "after 'run ... --' the completion leaves the words to bash's default"
is "$(complete_words "$SR_BIN" --config "$sr_tmp/pick-f")" "$sr_tmp/pick-file" "--config completes a file"
is "$(complete_words "$SR_BIN" --config "$sr_tmp/pick-file" run-)" "run-code" \
  "and the command after it is completed as the command"
is "$(complete_words "$SR_BIN" --c)" "--config" "'--c' completes to --config"

# --- images ---

if [ "$have_python" -eq 1 ]; then
  fixture () { python3 "$SR_SRCDIR/tests/helpers/oci-fixture.py" "$@"; }
  fixture tar "$sr_tmp/layer.tar" d:bin f:bin/hello=hi >/dev/null &&
    fixture layout "$sr_tmp/layout" "$sr_tmp/layer.tar" >/dev/null &&
    "$SR_BIN" image import --quiet --name demo:1.0 "$sr_tmp/layout" >/dev/null &&
    "$SR_BIN" image import --quiet --name other "$sr_tmp/layout" >/dev/null
  ok $? "two images imported for the completion"
  for mode in "${modes[@]}"; do
    m=${mode#plain}
    is "$(complete_words ${m:+"$m"} "$SR_BIN" image rm "" | sort | tr '\n' ' ')" "demo:1.0 other " \
      "'image rm' completes the image names${m:+ (bash-completion)}"
    is "$(complete_words ${m:+"$m"} "$SR_BIN" run --image d)" "demo:1.0" \
      "--image completes an image name${m:+ (bash-completion)}"
  done
  if [ "$have_bc" -eq 1 ]; then
    # bash splits "demo:" into "demo" ":"; bash-completion puts it together.
    is "$(LINE="$SR_BIN image inspect demo:" complete_words --bc "$SR_BIN" image inspect demo :)" \
      "1.0" "a name with ':' completes after the colon (bash-completion)"
  fi
else
  skip "python3 is not installed: no image fixture"
fi

# --- containers, for kill ---

if make_busybox_rootfs "$sr_tmp/rootfs"; then
  "$SR_BIN" run --timeout 20 --rootfs "$sr_tmp/rootfs" -- sleep 20 >/dev/null 2>&1 &
  runner=$!
  name=""
  for _ in $(seq 150); do
    name=$("$SR_BIN" ps 2>/dev/null | awk 'NR > 1 { print $1; exit }')
    [ -n "$name" ] && break
    sleep 0.1
  done
  if [ -n "$name" ]; then
    is "$(complete_words "$SR_BIN" kill "")" "$name" "'kill' completes the names ps shows"
    "$SR_BIN" kill "$name"
    ok $? "and kill takes that name"
  else
    ok 1 "a container shows in ps"
  fi
  wait "$runner" 2>/dev/null
else
  skip "busybox is not installed: no container for kill"
fi

# --- sandbox-runner.conf(5) ---

# The text of the tag entry `.It Cm KEY ...` of a page, up to the next.
entry () {
  awk -v key="$2" '
    $0 ~ "^\\.It Cm " key "( |$)" { on = 1; next }
    on && /^\.(It|El|Ss|Sh)/ { exit }
    on { print }' "$1"
}

if [ "$have_python" -eq 1 ]; then
  "$SR_BIN" config show --json >"$sr_tmp/config.json"
  ok $? "config show --json"
  settings=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
for k, v in d.items():
    if k != "languages":
        print("%s\t%s\t%s" % (k, v["origin"], v["value"]))' "$sr_tmp/config.json")
  like "$settings" "^timeout	" "config show lists the settings"
  while IFS=$'\t' read -r key origin value; do
    text=$(entry "$man5" "$key")
    if ! grep -Eq "^\.It Cm $key No = " "$man5"; then
      ok 1 "sandbox-runner.conf(5) documents $key"
    elif [ "$origin" = default ] && [ -n "$value" ] && [ "${value#*/}" = "$value" ]; then
      like "$text" "Default: ${value//./\\.}\.?\$" "sandbox-runner.conf(5) documents $key, default $value"
    elif [ "$origin" = default ] && [ -z "$value" ]; then
      like "$text" "Default: empty" "sandbox-runner.conf(5) documents $key, default empty"
    else
      ok 0 "sandbox-runner.conf(5) documents $key"
    fi
  done <<<"$settings"
  keys=$(printf '%s\n' "$settings" | cut -f1)
  documented=$(sed -n 's/^\.It Cm \([a-z_]*\) No = .*/\1/p' "$man5")
  # shellcheck disable=SC2086
  is "$(missing_from "$keys" $documented)" "" "sandbox-runner.conf(5) documents no setting that is gone"

  # Every key through its SANDBOX_ variable, as the page says.
  env_args=()
  while IFS=$'\t' read -r key origin value; do
    env_args+=("SANDBOX_${key^^}=$value")
  done <<<"$settings"
  env "${env_args[@]}" "$SR_BIN" config show --json >"$sr_tmp/env.json"
  not_env=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(k for k, v in d.items() if k != "languages" and v["origin"] != "environment"))' \
    "$sr_tmp/env.json")
  is "$not_env" "" "every setting is read from SANDBOX_<KEY>"

  languages=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
for name, l in d["languages"].items():
    for f, v in l.items():
        if f not in ("origin", "source_of_setting"):
            print("%s\t%s\t%s\t%s" % (name, f, l["origin"], v))' "$sr_tmp/config.json")
  fields=$(printf '%s\n' "$languages" | cut -f2 | sort -u)
  undocumented=""
  for f in $fields; do
    grep -qx "\.It Cm language \. Ns Ar name \. Ns Cm $f" "$man5" || undocumented="$undocumented $f"
  done
  is "${undocumented# }" "" "sandbox-runner.conf(5) documents every field of language.NAME"
  # The built-in table, as the page shows it.
  table=$(sed -n '/^The built-in table:/,/^\.Ed/p' "$man5" | sed 's/  */ /g')
  wrong=""
  while IFS=$'\t' read -r name f origin value; do
    [ "$origin" = default ] || continue
    line="language.$name.$f =${value:+ $value}"
    printf '%s\n' "$table" | grep -qxF -- "$line" || wrong="$wrong language.$name.$f"
  done <<<"$languages"
  is "${wrong# }" "" "sandbox-runner.conf(5) shows the built-in language table as it is"
else
  skip "python3 is not installed: config keys not checked"
fi

# --- sandbox-runner-mcp(7) ---

# The text of one .Ss section of a page.
subsection () {
  awk -v name="$2" '
    $0 == ".Ss " name { on = 1; next }
    on && /^\.S[hs] / { exit }
    on { print }' "$1"
}

# mcp_exchange OUT [ENV...]: initialize, then the messages on stdin, then
# end of input; the replies go to OUT.
mcp_exchange () {
  local out=$1
  shift
  {
    echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"ops-docs","version":"1"}}}'
    echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
    cat
  } | env "$@" timeout 60 "$SR_BIN" serve >"$out" 2>"$out.err"
}

call () {
  printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s","arguments":%s}}\n' \
    "$1" "$2" "$3"
}

if [ "$have_python" -eq 1 ]; then
  mkdir -p "$sr_tmp/empty-store"
  : >"$sr_tmp/not-a-dir"
  {
    echo '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
    call 10 run_code '{"code":"1","language":"python","bogus":1}'
    call 11 run_code '{"code":"1","language":"no-such"}'
    call 12 run_code '{"code":"","language":"python"}'
    call 13 run_code '{"code":"123456789","language":"python"}'
    call 14 run_code '{"code":"1","language":"python","timeout_seconds":100000}'
    call 15 run_code '{"code":"1","language":"python"}'
    call 16 get_execution_history '{"limit":0}'
  } | mcp_exchange "$sr_tmp/mcp.out" SANDBOX_IMAGE_STORE="$sr_tmp/empty-store" SANDBOX_MAX_CODE_SIZE=8
  ok $? "serve answers over stdio"
  call 20 get_execution_history '{}' |
    mcp_exchange "$sr_tmp/mcp2.out" SANDBOX_HISTORY_DB="$sr_tmp/not-a-dir/history.db"

  tools=$(python3 -c 'import json, sys
for line in open(sys.argv[1]):
    m = json.loads(line)
    if m.get("id") != 2:
        continue
    for t in m["result"]["tools"]:
        def props(schema):
            out = []
            for k, v in (schema or {}).get("properties", {}).items():
                out.append(k)
                out += props(v.get("items"))
            return out
        # "|" and not a tab: read collapses empty fields between tabs.
        print("%s|%s|%s" % (t["name"], " ".join(props(t.get("inputSchema"))),
                            " ".join(props(t.get("outputSchema")))))' "$sr_tmp/mcp.out")
  like "$tools" "^run_code[|]" "tools/list over stdio lists the tools"
  while IFS='|' read -r tool inputs outputs; do
    text=$(subsection "$man7" "$tool")
    if [ -z "$text" ]; then
      ok 1 "sandbox-runner-mcp(7) has a section for the tool $tool"
      continue
    fi
    undocumented=""
    for p in $inputs; do
      printf '%s\n' "$text" | grep -Eq "^\.It Cm $p( |\$)" || undocumented="$undocumented $p"
    done
    is "${undocumented# }" "" "sandbox-runner-mcp(7) documents every argument of $tool"
    undocumented=""
    for p in $outputs; do
      printf '%s\n' "$text" | grep -Eq "^\.It .*Cm $p( |\$)" || undocumented="$undocumented $p"
    done
    is "${undocumented# }" "" "sandbox-runner-mcp(7) documents every result field of $tool"
  done <<<"$tools"
  sections=$(sed -n '/^\.Sh TOOLS$/,/^\.Sh /s/^\.Ss //p' "$man7")
  # shellcheck disable=SC2086
  is "$(missing_from "$(printf '%s\n' "$tools" | cut -d'|' -f1)" $sections)" "" \
    "sandbox-runner-mcp(7) documents no tool that tools/list lacks"

  codes=$(cat "$sr_tmp/mcp.out" "$sr_tmp/mcp2.out" | python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    r = m.get("result") or {}
    if r.get("isError"):
        print(json.loads(r["content"][0]["text"])["error"]["code"])' | sort -u)
  # shellcheck disable=SC2086
  has_all "$codes" "the refused calls carry the expected error codes" \
    invalid_arguments unknown_language empty_code code_too_large timeout_too_large \
    image_missing history_unavailable
  errors=$(sed -n '/^\.Sh TOOL ERRORS$/,/^\.Sh /p' "$man7")
  undocumented=""
  for c in $codes; do
    printf '%s\n' "$errors" | grep -qx "\.It Cm $c" || undocumented="$undocumented $c"
  done
  is "${undocumented# }" "" "sandbox-runner-mcp(7) documents every error code a refused call carries"
else
  skip "python3 is not installed: MCP tools not checked"
fi

# --- what the README's two commands install ---
setup_groups=$(sed -n 's|^"$src/tools/deps.sh" ||p' "$SR_SRCDIR/tools/setup.sh")
is "$setup_groups" "build runtime images" "tools/setup.sh installs the build, runtime and image groups"
# shellcheck disable=SC2086
host=$("$SR_SRCDIR/tools/deps.sh" --list $setup_groups)
for pkg in valgrind shellcheck nodejs npm bubblewrap runc crun gnuplot-nox strace; do
  printf '%s\n' "$host" | grep -qx "$pkg" && echo "# $pkg is among them"
done > "$sr_tmp/toolchain"
is "$(cat "$sr_tmp/toolchain")" "" "and none of the test and bench toolchain"
like "$(sed -n 's|.*"$src/tools/deps.sh" \([a-z ]*\) .*|\1|p' "$SR_SRCDIR/tools/run-tests.sh")" \
  "^build runtime images tests bench$" "the test command installs every group"

# --- the systemd unit ---

if command -v systemd-analyze >/dev/null; then
  # The unit as make install writes it, pointing at this build.
  mkdir -p "$sr_tmp/unit"
  sed "s|/usr/local/bin/sandbox-runner|$SR_BIN|" "$unit" >"$sr_tmp/unit/${unit##*/}"
  out=$(systemd-analyze verify --man=no "$sr_tmp/unit/${unit##*/}" 2>&1)
  rc=$?
  is "$rc:$out" "0:" "systemd-analyze verify finds nothing wrong with the unit"
  like "$(grep -E '^(Delegate|ProtectSystem|NoNewPrivileges)=' "$unit" | tr '\n' ' ')" \
    "Delegate=yes ProtectSystem=strict .*NoNewPrivileges=yes" "the unit delegates its cgroup and is hardened"
  # What would stop containers from being made (see the unit's comments).
  is "$(grep -Eo '^(ProtectKernelTunables|ProtectKernelLogs|ProtectControlGroups|ProtectProc|ProcSubset|RestrictNamespaces|ProtectHostname|PrivateDevices|MemoryDenyWriteExecute)=' "$unit")" \
    "" "the unit sets none of the directives that break container creation"
  is "$(grep -E '^(Type|RuntimeDirectoryPreserve)=' "$unit" | tr '\n' ' ')" "Type=notify RuntimeDirectoryPreserve=yes " \
    "the unit waits for the server's READY=1 and leaves root's runtime dir to the CLI"
  user_unit=$SR_SRCDIR/contrib/systemd/user/sandbox-runner-http.service
  mkdir -p "$sr_tmp/user-unit"
  sed "s|/usr/local/bin/sandbox-runner|$SR_BIN|" "$user_unit" >"$sr_tmp/user-unit/${user_unit##*/}"
  # A user manager's lookup paths start at $XDG_RUNTIME_DIR.
  mkdir -p -m 0700 "$sr_tmp/xdg"
  out=$(XDG_RUNTIME_DIR=$sr_tmp/xdg systemd-analyze verify --user --man=no \
    "$sr_tmp/user-unit/${user_unit##*/}" 2>&1)
  rc=$?
  is "$rc:$out" "0:" "systemd-analyze verify --user finds nothing wrong with the user unit"
else
  skip "systemd-analyze is not installed: the unit is not verified"
  skip "systemd-analyze is not installed: the unit's type is not checked"
  skip "systemd-analyze is not installed: the user unit is not verified"
fi

done_testing
