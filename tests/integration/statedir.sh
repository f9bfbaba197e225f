#!/bin/sh
# The runner's state directories are its own (issue 27): a runtime dir
# that another user made, a symbolic link or a directory others can write
# is refused with a message naming it, its owner and the setting to use,
# and nothing of ours is read or written there.  As root, two throw-away
# users play the victim and the attacker of the /tmp/sandbox-runner-UID
# default; as any user, the checks on the caller's own directories.
. "$(dirname "$0")/lib.sh"

unset SANDBOX_RUNTIME_DIR SANDBOX_IMAGE_STORE
me=$(id -u)

# --- the caller's own directories -------------------------------------

mkdir "$sr_tmp/real"
ln -s "$sr_tmp/real" "$sr_tmp/link"
SANDBOX_RUNTIME_DIR=$sr_tmp/link run_sr ps
is "$rc" 125 "a runtime dir that is a symbolic link is refused"
like "$err" "refusing to use $sr_tmp/link: it is a symbolic link .*set XDG_RUNTIME_DIR or runtime_dir" \
  "the message names the link and what to set"
is "$(ls -A "$sr_tmp/real")" "" "nothing is made where the link points"

mkdir -m 0777 "$sr_tmp/open"
chmod 0777 "$sr_tmp/open"
SANDBOX_RUNTIME_DIR=$sr_tmp/open run_sr ps
is "$rc" 125 "a runtime dir writable by others is refused"
like "$err" "refusing to use $sr_tmp/open: it is writable by others \\(owner uid $me.*mode 0777" \
  "the message names the path, its owner and its mode"

mkdir -m 0755 "$sr_tmp/run"
SANDBOX_RUNTIME_DIR=$sr_tmp/run run_sr ps
is "$rc" 0 "a runtime dir of ours is used"
like "$(stat -c %a "$sr_tmp/run")" "^7[01][01]$" "and others may not read it"
is "$(stat -c %a "$sr_tmp/run/containers")" 700 "its state dir is private"

SANDBOX_RUNTIME_DIR=$sr_tmp/new/run run_sr ps
is "$(stat -c %a "$sr_tmp/new/run")" 700 "a runtime dir the runner makes is 0700"

mkdir -m 0755 "$sr_tmp/run2" "$sr_tmp/run2/containers"
chmod 0777 "$sr_tmp/run2/containers"
SANDBOX_RUNTIME_DIR=$sr_tmp/run2 run_sr kill nothing
is "$rc" 125 "kill refuses a state dir writable by others"
like "$err" "refusing to use $sr_tmp/run2/containers: it is writable by others" "and says which"

mkdir -m 0777 "$sr_tmp/store"
chmod 0777 "$sr_tmp/store"
SANDBOX_IMAGE_STORE=$sr_tmp/store run_sr image list
is "$rc" 125 "an image store writable by others is refused"
like "$err" "refusing to use $sr_tmp/store: .*set image_store to" "naming the setting"

# The defaults: under XDG_RUNTIME_DIR when it is set, else /tmp/sandbox-runner-UID
# (root: /run/sandbox-runner, which root's runs share).
if [ "$me" -eq 0 ]; then
  default=/run/sandbox-runner
else
  default=/tmp/sandbox-runner-$me
  mkdir -m 0700 "$sr_tmp/xdg"
  run_cmd env XDG_RUNTIME_DIR="$sr_tmp/xdg" "$SR_BIN" ps
  is "$rc" 0 "ps runs with XDG_RUNTIME_DIR set"
  is "$(stat -c %a "$sr_tmp/xdg/sandbox-runner")" 700 "and makes its runtime dir there, 0700"
fi
run_cmd env -u XDG_RUNTIME_DIR "$SR_BIN" ps
is "$rc" 0 "ps runs without XDG_RUNTIME_DIR ($default)"
is "$(stat -c %u "$default")" "$me" "the default runtime dir is the caller's"
like "$(stat -c %a "$default")" "^7[01][01]$" "and not readable by others"

# --- another user's /tmp/sandbox-runner-UID ---------------------------

if [ "$me" -ne 0 ]; then
  skip "the attacks of another user need root to create the two users"
  done_testing
  exit
fi
require_busybox_rootfs
# System users: useradd gives them no subordinate ids in /etc/subuid.
for u in sr-victim sr-evil; do
  id "$u" >/dev/null 2>&1 || useradd --system --no-create-home --shell /bin/sh "$u" || skip_all "useradd $u"
done
victim=$(id -u sr-victim) evil=$(id -u sr-evil)
target=/tmp/sandbox-runner-$victim
home=$sr_tmp/victim-home
mkdir -p "$home"
chown sr-victim: "$home"

clean_target () {
  rm -rf "$target" "$target.evil"
}
clean_target
at_exit clean_target

# as_victim CMD...: CMD as the victim, in a login-less environment without
# XDG_RUNTIME_DIR (su, cron), its output in $out and $err.
as_victim () {
  run_cmd runuser -u sr-victim -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$home" \
    SANDBOX_HISTORY_DB="$home/h.db" "$@"
}

# A process of the victim, and an entry naming it as the init of a
# container whose runner died: what the victim's next run would reclaim.
runuser -u sr-victim -- sleep 300 2>/dev/null &
sleeper=$!
at_exit "kill $sleeper 2>/dev/null"
pid=""
for _ in $(seq 1 100); do
  pid=$(pgrep -u sr-victim -P "$sleeper" sleep) && break
  [ "$(stat -c %U "/proc/$sleeper" 2>/dev/null)" = sr-victim ] && pid=$sleeper && break
  sleep 0.1
done
[ -n "$pid" ] || { echo "Bail out! the victim's sleep did not start"; exit 1; }
start=$(awk '{ sub(/.*\) /, ""); print $20 }' "/proc/$pid/stat")
plant () {
  # plant DIR: the attacker's entry in DIR/containers
  mkdir -p "$1/containers"
  printf '{"name":"planted","kind":"run","runner_pid":999999999,"runner_start":1,"init_pid":%s,"init_start":%s,"created":1,"cgroup":""}\n' \
    "$pid" "$start" > "$1/containers/planted.json"
}
alive () { kill -0 "$pid" 2>/dev/null; }

# 1. The attacker made the victim's default runtime dir.
runuser -u sr-evil -- mkdir -m 0755 "$target"
plant "$target"
chown -R sr-evil: "$target"
before=$(ls -laR "$target")
as_victim "$SR_BIN" run --rootfs "$ROOTFS" -- true
is "$rc" 125 "a run in a runtime dir another user made is refused"
like "$err" "refusing to use $target: it is another user's \\(owner uid $evil \\(sr-evil\\).*set XDG_RUNTIME_DIR or runtime_dir" \
  "the message names the path, the owner and what to set"
alive
ok $? "the planted entry did not kill the victim's process"
is "$(ls -laR "$target")" "$before" "nothing was written there"
as_victim "$SR_BIN" kill planted
is "$rc" 125 "kill refuses it too"
alive
ok $? "and kills nothing"
as_victim "$SR_BIN" ps
is "$rc" 125 "ps does not list what the attacker planted"
as_victim env XDG_RUNTIME_DIR="$home/xdg" "$SR_BIN" ps
is "$rc" 0 "with XDG_RUNTIME_DIR set, the victim's runner works"
clean_target

# 2. A symbolic link to the attacker's directory.
runuser -u sr-evil -- mkdir -m 0777 "$target.evil"
plant "$target.evil"
chown -R sr-evil: "$target.evil"
chmod 0777 "$target.evil/containers"
runuser -u sr-evil -- ln -s "$target.evil" "$target"
before=$(ls -laR "$target.evil")
as_victim "$SR_BIN" run --rootfs "$ROOTFS" -- true
is "$rc" 125 "a runtime dir that is another user's symbolic link is refused"
like "$err" "refusing to use $target: it is a symbolic link \\(owner uid $evil" "saying so"
alive
ok $? "the entry behind the link killed nothing"
is "$(ls -laR "$target.evil")" "$before" "nothing was written behind the link"
clean_target

# 3. World-writable and sticky, as /tmp is, but the attacker's.
runuser -u sr-evil -- mkdir -m 1777 "$target"
runuser -u sr-evil -- chmod 1777 "$target"
as_victim "$SR_BIN" run --rootfs "$ROOTFS" -- true
is "$rc" 125 "a sticky world-writable runtime dir of another user is refused"
is "$(ls -A "$target")" "" "and left empty"
clean_target

# 4. The victim's own, but writable by everyone, with the entry planted in it.
mkdir -m 0777 "$target"
chmod 0777 "$target"
plant "$target"
chown sr-victim: "$target"
chown -R sr-evil: "$target/containers"
as_victim "$SR_BIN" run --rootfs "$ROOTFS" -- true
is "$rc" 125 "a runtime dir of the victim's that others can write is refused"
like "$err" "refusing to use $target: it is writable by others" "saying so"
alive
ok $? "the entry planted in it killed nothing"
clean_target

# 5. A runtime dir set inside a directory of the attacker's, who could swap it.
mkdir "$sr_tmp/evil-parent"
chown sr-evil: "$sr_tmp/evil-parent"
as_victim env SANDBOX_RUNTIME_DIR="$sr_tmp/evil-parent/run" "$SR_BIN" ps
is "$rc" 125 "a runtime dir in another user's directory is refused"
like "$err" "refusing to use $sr_tmp/evil-parent/run: its parent $sr_tmp/evil-parent is another user's \\(owner uid $evil" \
  "naming the parent and its owner"
is "$(ls -A "$sr_tmp/evil-parent")" "" "and nothing is made in it"

# 6. Nothing there: the victim's runner makes its own, private.
as_victim "$SR_BIN" ps
is "$rc" 0 "without a runtime dir, the victim's runner makes one"
is "$(stat -c '%U %a' "$target")" "sr-victim 700" "owned by the victim, mode 0700"

done_testing
