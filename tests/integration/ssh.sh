#!/bin/sh
# SSH machines (sandbox/ssh.c) against a real OpenSSH server: an sshd of
# our own on a loopback port, with a host key and a user key made here,
# which stops with the test (and in any case after five minutes).
. "${SR_SRCDIR}/tests/integration/lib.sh"
driver=$SR_BUILDDIR/tests/helpers/ssh-driver
. "${SR_SRCDIR}/tests/integration/sshd.sh"

# The remote side is this host: the driver's shell leaves its rc and
# command files in /tmp (shell.c writes them; nothing removes them yet).
at_exit "rm -f /tmp/.sr-shell-drv.rc /tmp/.sr-shell-drv.sh"
# A Host of OpenSSH's own configuration, named without ssh.NAME settings.
cat > "$d/ssh_config" <<EOF
Host aliased
  HostName 127.0.0.1
  Port $port
  User root
  IdentityFile $d/user_key
  IdentitiesOnly yes
  UserKnownHostsFile $d/known_hosts
EOF
cat > "$d/conf" <<EOF
runtime_dir = $d/run
ssh_config = $d/ssh_config
EOF
{ ssh_target box "$d/known_hosts"; ssh_target bad "$d/wrong_known_hosts"
  ssh_target new "$d/empty_known_hosts"; } >> "$d/conf"
export SANDBOX_CONFIG=$d/conf

# What no ssh process nor socket of ours is left of.
leftovers () {
  n=$(pgrep -f "$d/run/ssh" | wc -l)
  echo "processes=$n entries=$(ls -A "$d/run/ssh" 2>/dev/null | wc -l)"
}

# --- the configuration ---
shown=$("$SR_BIN" config show 2>&1)
like "$shown" "ssh\.box\.port += $port +# config file \($d/conf:[0-9]+\)" \
  "config show lists ssh.NAME settings with the file and line that set them"
printf 'ssh.-x.host = h\n' > "$d/conf-bad"
out=$(SANDBOX_CONFIG=$d/conf-bad "$SR_BIN" config show 2>&1)
like "$out" "conf-bad:1: ssh name '-x'" "an ssh NAME is a checked identifier, errors name file:line"
printf 'ssh.a.port = 70000\n' > "$d/conf-bad"
out=$(SANDBOX_CONFIG=$d/conf-bad "$SR_BIN" config show 2>&1)
like "$out" "conf-bad:1: ssh.a.port '70000'" "a port out of range is refused"
printf 'ssh.a.host = -oProxyCommand=x\n' > "$d/conf-bad"
out=$(SANDBOX_CONFIG=$d/conf-bad "$SR_BIN" config show 2>&1)
like "$out" "conf-bad:1: ssh.a.host .*not starting with '-'" "a host that ssh would read as an option is refused"
printf 'backend = ssh\n' > "$d/conf-bad"
out=$(SANDBOX_CONFIG=$d/conf-bad "$SR_BIN" config show 2>&1)
like "$out" "conf-bad:1: backend: 'ssh' runs no code: an SSH machine is not a sandbox" \
  "ssh is never the backend that runs code"

# --- one connection, its commands, files and shell ---
mkdir -p "$d/w/sub dir"
echo "hello there" > "$d/w/sub dir/a.txt"
printf 'x' > "$d/w/b"
# Other runners on this host (another suite, a server) have pid files too.
ls /tmp/.sr-ssh-*.pid 2>/dev/null > "$d/pidfiles-before"
"$driver" box \
  pid alive \
  "cwd:$d/w/sub dir" "env:QUOTED=it's \$HOME; \`x\` \"y\"" \
  'exec:pwd; printf "%s" "$QUOTED"' \
  'exec:echo oops >&2; exit 7' \
  "exec:test -e '$d/pwned' && echo pwned; echo clean" \
  "write:$d/w/new/f.txt:first line" \
  "read:$d/w/new/f.txt" \
  "walk:$d/w" \
  "search:$d/w:hel+o" \
  "writebig:$d/w/big:1048576" \
  'shell:cd /tmp && X=kept' \
  'shell:pwd; echo "$X"; false' \
  "shellbg:sleep 100.$$" \
  ctrlc \
  'shell:echo after' \
  "timeout:700:sleep 30.$$; echo not reached" \
  run \
  > "$d/out" 2>&1 &
drv=$!
# Watch the big file's size as it is written: temp + rename means it is
# never seen partly written.
( while kill -0 $drv 2>/dev/null; do stat -c %s "$d/w/big" 2>/dev/null; done ) | sort -u > "$d/sizes"
wait $drv
rc=$?
is "$rc" 0 "the driver ran every step"
line () { grep -E "^$1( |$)" "$d/out" | sed -n "${2:-1}p"; }
like "$(line connected)" "^connected ssh:box$" "connects through a ControlMaster"
like "$(line pid)" "^pid [1-9][0-9]*$" "the master's pid is known"
is "$(line alive)" "alive yes" "ssh -O check says it is alive"
like "$(line exec 1)" "^exec success 0 $d/w/sub dir\|it's \\\$HOME; \`x\` \"y\" " \
  "exec runs in cwd with the variable, every word quoted (nothing expanded)"
# (The remote login's rc files may print on stderr too.)
like "$(line exec 2)" "^exec error 7 .*oops\|" "exit codes and stderr come back"
like "$(line exec 3)" "^exec success 0 clean\| " "nothing ran but the command"
is "$(line write)" "write ok" "file_write on the remote, parents made"
is "$(line read)" "read 10 first line" "read back"
is "$(grep '^walk' "$d/out" | sort | tr '\n' ,)" \
  "walk b 1,walk new/f.txt 10,walk sub dir/a.txt 12," \
  "walk lists the files below a directory with their sizes"
like "$(line match)" "^match $d/w/sub dir/a.txt 1 hello there$" "file_search over the primitives"
is "$(line writebig)" "writebig ok 1048576" "a 1 MiB write in many pieces reads back the same"
is "$(cat "$d/sizes" | tr '\n' ' ')" "1048576 " "the file was never seen partly written"
is "$(ls -A "$d/w" | grep -c '^\.sr-tmp-')" 0 "no temp file is left"
is "$(line shell 1)" "shell ready 0 " "a remote persistent shell runs a command"
is "$(line shell 2)" "shell ready 1 /tmp|kept|" "cwd, variables and \$? persist between commands"
is "$(line shellbg)" "shellbg waiting" "a command left running is waiting"
like "$(line ctrlc)" "^ctrlc ready 130 [0-9]+$" "^C interrupts the remote foreground job (130)"
ms=$(line ctrlc | cut -d' ' -f4)
ok $([ "${ms:-9999}" -lt 3000 ] && echo 0 || echo 1) "^C took ${ms} ms"
is "$(line shell 3)" "shell ready 0 after|" "the shell goes on after ^C"
like "$(line exec 4)" "^exec timeout " "a timeout ends the command"
sleep 0.5
is "$(pgrep -f "sleep (100|30)\\.$$([^0-9]|\$)" | wc -l)" 0 \
  "interrupted and timed-out commands are gone on the remote side"
like "$(line error)" "^error not_a_sandbox an SSH machine runs no run_code: it is not a sandbox" \
  "run_code refuses"
is "$(line destroyed)" "destroyed" "the connection was closed"
is "$(leftovers)" "processes=0 entries=0" "no ssh process nor socket is left"
is "$(ls /tmp/.sr-ssh-*.pid 2>/dev/null | grep -vxF -f "$d/pidfiles-before" | wc -l)" 0 \
  "no command's pid file is left on the remote side"
sleep 0.3
# timeout(1) is sshd's parent; sshd's children serve connections.
is "$(pgrep -P "$(pgrep -P $sshd_pid)" | wc -l)" 0 "sshd has no connection left"

# --- a lost connection ---
out=$("$driver" box 'exec:true' killmaster 'exec:echo still' alive 2>&1)
like "$out" "error machine_unreachable ssh box: the connection is gone" \
  "a command after the connection is lost fails, without connecting again"
like "$out" "alive no" "and the machine is not alive"
is "$(leftovers)" "processes=0 entries=0" "destroy cleans up after a lost master"

# --- a runner killed with its connection open ---
"$driver" box 'exec:sleep 2' > /dev/null 2>&1 &
drv=$!
for _ in $(seq 50); do
  [ -S "$(ls -d "$d"/run/ssh/*/s 2>/dev/null | head -n 1)" ] && break
  sleep 0.1
done
sleep 0.5
kill -9 $drv; wait $drv 2>/dev/null
like "$(leftovers)" "processes=[1-9].* entries=1" "a killed runner leaves its master behind"
sleep 2
"$driver" box 'exec:true' > /dev/null 2>&1
is "$(leftovers)" "processes=0 entries=0" "the next runner ends it and removes its socket"

# --- host keys ---
out=$("$driver" bad 2>&1)
like "$out" "^error host_key_mismatch ssh bad \(127\.0\.0\.1\): the host's key differs" \
  "a host key that differs from known_hosts is refused"
out=$("$driver" new 2>&1)
like "$out" "^error host_key_unknown ssh new \(127\.0\.0\.1\): the host's key is not in known_hosts" \
  "an unknown host key is refused, never accepted"
is "$(wc -c < "$d/empty_known_hosts")" 0 "known_hosts was not written"
is "$(leftovers)" "processes=0 entries=0" "a refused connection leaves nothing behind"

# --- OpenSSH's own Host entries ---
out=$("$driver" aliased 'exec:id -un' 2>&1)
like "$out" "exec success 0 root\|" "a NAME without settings is ssh's Host alias"
out=$("$driver" nosuch 2>&1)
like "$out" "^error connect_failed ssh nosuch \(nosuch\): " "an unknown host is connect_failed"
is "$(leftovers)" "processes=0 entries=0" "nothing left after them either"

done_testing
