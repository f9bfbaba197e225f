#!/bin/sh
# Who is who inside: an image's files are owned as the image says (root's
# are root's, through an idmapped rootfs for a root runner, by extraction
# for a rootless one); a --bind with :idmap shows its host owners; the
# commands of run_code and sessions run as the user setting's user (1000
# by default, root only when configured; a name is looked up in the
# image's own /etc/passwd) with their writable directories theirs; the CLI
# run keeps root unless --user says otherwise.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
require_image python
if [ "$(id -u)" -eq 0 ]; then root_runner=yes; else root_runner=no; fi

# --- the image's owners ---
run_sr run --image python -- stat -c '%U %u' /usr/bin/python3 /etc/passwd
is "$(echo $out)" "root 0 root 0" "an image's root-owned files are root's inside, not nobody's"

# --- --bind :idmap ---
mkdir -p "$sr_tmp/private"
echo secret > "$sr_tmp/private/f"
chmod 700 "$sr_tmp/private"
chmod 600 "$sr_tmp/private/f"
if [ "$root_runner" = yes ]; then
  run_sr run --image python --bind "$sr_tmp/private:/p:ro,idmap" -- sh -c 'stat -c %U /p; cat /p/f'
  is "$rc $(echo $out)" "0 root secret" "a root-owned 0700 bind with :idmap is root's inside, and readable"
  run_sr run --image python --bind "$sr_tmp/private:/p:ro" -- sh -c 'stat -c %U /p; cat /p/f'
  like "$(echo $out $err)" "^nobody .*Permission denied" "without :idmap it is nobody's, and closed"
  run_sr run --image python --bind "$sr_tmp/private:/p:idmap" --user 1000 -- sh -c 'cat /p/f'
  like "$rc $err" "Permission denied" "a 0700 idmapped bind stays closed to the user"
  # Host paths below a directory closed to the container's ids: the
  # parent, not the container, opens them.
  mkdir -p "$sr_tmp/closed/dir"
  echo reached > "$sr_tmp/closed/dir/f"
  chmod 700 "$sr_tmp/closed"
  run_sr run --image python --bind "$sr_tmp/closed/dir:/p:ro" -- cat /p/f
  is "$rc $out" "0 reached" "a plain bind whose source lies below a 0700 directory works"
  run_sr run --image python --bind "$sr_tmp/closed/dir:/p" --user 1000 -- cat /p/f
  is "$rc $out" "0 reached" "also for a user inside"
  SANDBOX_IMAGE_STORE=$sr_tmp/closed/store "$SR_BIN" image import --quiet --name python \
    "$image_cache/python" >/dev/null 2>&1
  SANDBOX_IMAGE_STORE=$sr_tmp/closed/store run_sr run --image python --bind "$sr_tmp/private:/p:idmap" \
    -- sh -c 'stat -c %U /usr/bin/python3; cat /p/f'
  is "$rc $(echo $out)" "0 root secret" "an image store below a 0700 directory works, idmapped binds too"
  run_sr run --image python --bind "/sys/kernel/mm:/p:idmap" -- true
  like "$rc $err" "^125 .*/sys/kernel/mm:/p:idmap: its file system refuses an idmapped mount.*bind it without idmap" \
    "a file system that refuses idmapped mounts is named, with what to do"
else
  run_sr run --image python --bind "$sr_tmp/private:/p:ro,idmap" -- true
  like "$rc $err" "^125 .*a bind with idmap needs a root runner" "rootless: :idmap is refused, saying why"
  run_sr run --image python --bind "$sr_tmp/private:/p:ro" -- sh -c 'stat -c %U /p; cat /p/f'
  is "$rc $(echo $out)" "0 root secret" "rootless: the runner's own files are root's inside already"
  skip "a 0700 idmapped bind stays closed to the user: needs a root runner"
  skip "a file system that refuses idmapped mounts is named: needs a root runner"
  for what in "a plain bind below a 0700 directory" "for a user inside" "an image store below a 0700 directory"; do
    skip "$what: the parent opens host paths for a root runner only"
  done
fi
binds=$(for i in $(seq 1 33); do printf ' --bind %s:/b%s:ro' "$sr_tmp/private" "$i"; done)
# shellcheck disable=SC2086 # one word per option
run_sr run --image python $binds -- true
like "$rc $err" "^125 .*33 binds: a container takes at most 32" "more binds than a container takes are refused, with the cap"
run_sr run --image python --bind "$sr_tmp/private:/p:idmap,exec" -- true
like "$rc $err" "^125 .*an option is ro, rw or idmap, not 'exec'" "an unknown bind option is named"

# --- the CLI run: root unless --user ---
run_sr run --image python -- id -u
is "$rc $out" "0 0" "run keeps root inside by default"
run_sr run --image python --user 1234:99 -- sh -c 'id -u; id -g; touch /work/w && echo work-writable'
is "$rc $(echo $out)" "0 1234 99 work-writable" "run --user UID:GID runs the command as those ids, /work theirs"
run_sr run --image python --user al/ice -- true
like "$rc $err" "^125 .*user 'al/ice': expected root, USER or USER:GROUP" "a user that is no name nor id is refused"
run_sr run --image python --user sandbox -- id
like "$rc $out" "^0 uid=1000\(sandbox\) gid=1000\(sandbox\)" "run --user NAME is the image's passwd entry"
run_sr run --image python --user sandbox:users -- sh -c 'id -u; id -g'
is "$rc $(echo $out)" "0 1000 100" "run --user NAME:GROUP takes the group from the image's /etc/group"
run_sr run --image python --user nosuch -- true
like "$rc $err" "^125 .*user 'nosuch' is not in the /etc/passwd of image python" \
  "run --user with a name the image lacks is refused, naming the user and the image"

# --- run_code: the user setting ---
cat > "$sr_tmp/who.py" <<'EOF'
import os
print(os.getuid(), os.getgid(), os.environ["HOME"])
for d in ("/work", "/tmp"):
    open(d + "/w", "w").write("x")
    os.mkdir(d + "/sub")
print("writable")
EOF
run_sr run-code -l python "$sr_tmp/who.py"
is "$rc $(echo $out)" "0 1000 1000 /work writable" \
  "run_code runs as uid 1000 by default, HOME /work, with /work and /tmp writable"
printf 'import getpass, pwd, os\nprint(getpass.getuser(), pwd.getpwuid(os.getuid()).pw_dir)\n' \
  > "$sr_tmp/name.py"
run_sr run-code -l python "$sr_tmp/name.py"
is "$rc $(echo $out)" "0 sandbox /work" \
  "the images name the default user (getpass.getuser() and its passwd entry)"
export SANDBOX_USER=root
run_sr run-code -l python "$sr_tmp/who.py"
unset SANDBOX_USER
like "$rc $(echo $out)" "^0 0 0 /work writable" "user = root runs it as root"
run_sr run-code -l python --user 2000:3000 "$sr_tmp/who.py"
like "$rc $(echo $out)" "^0 2000 3000 /work writable" "--user sets it for one run"
run_sr run-code -l python --user 70000 "$sr_tmp/who.py"
like "$rc $err" "an id below 65536" "a uid out of the containers' range is refused"
printf 'import subprocess\nsubprocess.run(["id"])\n' > "$sr_tmp/id.py"
export SANDBOX_USER=sandbox
run_sr run-code -l python "$sr_tmp/id.py"
like "$rc $out" "^0 uid=1000\(sandbox\) gid=1000\(sandbox\)" "user = sandbox: run_code runs as the image's sandbox"
run_sr run-code -l python --json "$sr_tmp/who.py"
like "$rc $(field stdout)" "^0 1000 1000 /work" "user = sandbox: /work and /tmp are its"
export SANDBOX_USER=nosuch
run_sr run-code -l python --json "$sr_tmp/id.py"
like "$rc $(field failure) $(field error)" \
  "^125 invalid_config language python: user 'nosuch' is not in the /etc/passwd of image python" \
  "user = nosuch: run_code fails as invalid_config, naming the user and the image"
export SANDBOX_USER=4321
run_sr run-code -l python "$sr_tmp/id.py"
like "$rc $out" "^0 uid=4321 gid=4321 " "a numeric user the image does not list still runs, its gid its uid's"
unset SANDBOX_USER
leftover=$(find "$SANDBOX_RUNTIME_DIR/scratch" -mindepth 1 2>/dev/null | wc -l)
is "$leftover" 0 "the runner removes what the user made in its code directory"

# --- doctor says who they are ---
doctor_check () {
  printf '%s' "$out" | python3 -c 'import json, sys
for c in json.load(sys.stdin)["checks"]:
    if c["check"] == sys.argv[1]:
        print(c["status"], c["detail"])' "$1"
}
run_sr doctor --json
like "$(doctor_check 'user inside')" "^ok run_code and sessions run as 1000, 1000:1000" \
  "doctor says who run_code and sessions run as"
if [ "$root_runner" = yes ]; then
  like "$(doctor_check 'image owners')" "^ok the root filesystems are mounted idmapped" \
    "doctor says the image store takes idmapped root filesystems"
else
  like "$(doctor_check 'image owners')" "^ok the layers are extracted as you" \
    "doctor says a rootless runner's layers are root's inside"
fi
SANDBOX_USER=sandbox SANDBOX_SESSION_IMAGE=python run_sr doctor --json
like "$(doctor_check 'user inside')" "^ok run_code and sessions run as sandbox, 1000:1000 \(in image python\)" \
  "doctor resolves a name in the session image"
SANDBOX_USER=nosuch SANDBOX_SESSION_IMAGE=python run_sr doctor --json
like "$(doctor_check 'user inside')" "^warning user 'nosuch' is not in the /etc/passwd of image python" \
  "doctor says when the session image lacks the user"

# --- a session: its commands and shells run as the user ---
require_session_client
export SANDBOX_SESSION_IMAGE=python
start_server && export SANDBOX_RUNNER_URL=$url
ok $? "serve --transport http listens"
run_sr session new --image python
sid=$out
printf 'import os\nopen("/mnt/data/d", "w").write("x")\nopen("/work/w", "w").write("x")\nopen("/scratch/s", "w").write("x")\nprint(os.getuid(), os.stat("/mnt/data/d").st_uid)\n' \
  > "$sr_tmp/s.py"
run_sr session run -s "$sid" -l python "$sr_tmp/s.py"
is "$rc $out" "0 1000 1000" "a session's run is the user's, with /mnt/data, /work and /scratch writable"
run_sr session shell-new -s "$sid"
shell=$out
run_sr session shell-exec -S "$shell" 'id -u; touch /mnt/data/from-shell && echo ok'
is "$rc $(echo $out)" "0 1000 ok" "a session shell runs as the user"

# What the runner writes for the session (file_write, uploads, a run's
# code) is the user's, root runner or rootless: the user changes it in
# place.
printf 'first\n' > "$sr_tmp/first"
run_sr session file-write -s "$sid" /mnt/data/dir/written.txt "$sr_tmp/first"
is "$rc" 0 "file_write into a new directory of /mnt/data"
run_sr session file-write -s "$sid" /work/w.txt "$sr_tmp/first"
run_sr session upload -s "$sid" "$sr_tmp/first" up.txt
run_sr session shell-exec -S "$shell" 'stat -c %u /mnt/data/dir/written.txt /mnt/data/dir /work/w.txt /mnt/data/up.txt'
is "$rc $(echo $out)" "0 1000 1000 1000 1000" \
  "file_write's file, the directory it made and an upload are the user's"
# A rootless runner's writer is the user, in directories open to the
# runner (setgid, its group): what it makes there stays open to the
# runner's group below, as the commands' own directories are.
run_sr session file-write -s "$sid" /mnt/data/dir/sub/deep.txt "$sr_tmp/first"
run_sr session shell-exec -S "$shell" 'stat -c %a /mnt/data/dir /mnt/data/dir/sub'
if [ "$root_runner" = yes ]; then
  is "$rc $(echo $out)" "0 755 755" "a root runner's new directories are 0755, as before"
else
  is "$rc $(echo $out)" "0 2775 2775" "a rootless runner's new directories stay setgid, open to its group"
fi
run_sr session shell-exec -S "$shell" 'echo more >> /mnt/data/dir/written.txt && echo more >> /work/w.txt && echo more >> /mnt/data/up.txt && cat /mnt/data/dir/written.txt'
is "$rc $(echo $out)" "0 first more" "the user appends to the runner's files in place"
run_sr session file-write -s "$sid" /mnt/data/dir/written.txt "$sr_tmp/first"
run_sr session shell-exec -S "$shell" 'stat -c %u /mnt/data/dir/written.txt; cat /mnt/data/dir/written.txt'
is "$rc $(echo $out)" "0 1000 first" "a file_write over the user's file leaves it the user's"
run_sr session close "$sid"
stop_server

# --- a session of a named user; one the image lacks ---
SANDBOX_USER=sandbox start_server && export SANDBOX_RUNNER_URL=$url
ok $? "serve with user = sandbox listens"
run_sr session new --image python
sid=$out
run_sr session run -s "$sid" -l python "$sr_tmp/id.py"
like "$rc $out" "^0 uid=1000\(sandbox\) gid=1000\(sandbox\)" "user = sandbox: a session's commands run as the image's sandbox"
run_sr session close "$sid"
stop_server
SANDBOX_USER=nosuch start_server && export SANDBOX_RUNNER_URL=$url
ok $? "serve with user = nosuch listens (the images say who exists)"
before=$(running_containers "$SANDBOX_RUNTIME_DIR/containers" | wc -l)
run_sr session new --image python
like "$rc $err" "user 'nosuch' is not in the /etc/passwd of image python" \
  "user = nosuch: creating a session fails, naming the user and the image"
is "$(running_containers "$SANDBOX_RUNTIME_DIR/containers" | wc -l)" "$before" "and leaves no container behind"
stop_server
done_testing
