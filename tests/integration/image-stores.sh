#!/bin/sh
# Root's image store read by other users (issue 27), as podman's
# additional image stores: an unprivileged user runs an image root
# imported without a copy of its own, sees where it comes from, and can
# change nothing in root's store.  The store is one this test makes, owned
# by root, in its temp dir; the user is the rootless suite's (sr-test).
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root, to make a store owned by root"
user=${SR_TEST_USER:-sr-test}
id "$user" >/dev/null 2>&1 || skip_all "no user $user (tools/run-tests.sh creates it)"
require_busybox_rootfs
command -v python3 >/dev/null || skip_all "python3 is not installed (it builds the fixtures)"

unset SANDBOX_IMAGE_STORES_READONLY
export SANDBOX_RUNTIME_DIR=$sr_tmp/run
sys=$sr_tmp/system-store
home=$sr_tmp/home
mkdir -m 0755 "$home"
chown "$user": "$home"

tar -C "$ROOTFS" -cf "$sr_tmp/base.tar" .
python3 "$SR_SRCDIR/tests/helpers/oci-fixture.py" layout "$sr_tmp/layout" --env PATH=/bin \
  --cmd=/bin/echo --cmd="from root's store" "$sr_tmp/base.tar"
SANDBOX_IMAGE_STORE=$sys run_sr image import --quiet --name test/shared:1 "$sr_tmp/layout"
is "$rc" 0 "root imports an image into its store"
id=$(printf '%s' "$out" | cut -d' ' -f2)

# as_user [VAR=VALUE...] CMD...: CMD as the user, with root's store
# (this test's) as its read-only store and a store of its own not made yet.
as_user () {
  run_cmd runuser -u "$user" -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$home" \
    XDG_RUNTIME_DIR="$home/run" SANDBOX_HISTORY_DB="$home/history.db" \
    SANDBOX_IMAGE_STORE="$home/store" SANDBOX_IMAGE_STORES_READONLY="$sys" "$@"
}

as_user "$SR_BIN" run --image test/shared:1
is "$rc" 0 "the user runs root's image"
is "$out" "from root's store" "and it is that image"
[ ! -e "$home/store" ]
ok $? "without an import: no store of the user's own is made"

as_user "$SR_BIN" image list
like "$out" "test/shared:1 +${id%"${id#????????????}"} .* $sys \\(read-only\\)" \
  "image list shows the image and that it is root's store's, read-only"
as_user "$SR_BIN" image list --json
is "$(json_field "$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)[0]))')" read_only)" \
  true "image list --json says read_only"
as_user "$SR_BIN" image inspect test/shared:1
like "$out" "\"rootfs\":[[:space:]]*\"$sys/images/$id/rootfs\"" "inspect gives the rootfs in root's store"

# run-code (the service's path) finds a language's image there too.
printf '%s\n' "language.shell.image = test/shared:1" "language.shell.source = main.sh" \
  "language.shell.run = sh /scratch/main.sh" > "$home/sr.conf"
echo 'echo "snippet in $(hostname)"' > "$home/main.sh"
chmod 644 "$home/sr.conf" "$home/main.sh"
as_user env SANDBOX_CONFIG="$home/sr.conf" "$SR_BIN" run-code --language shell "$home/main.sh"
is "$rc" 0 "run-code runs a language whose image is in root's store"
is "$out" "snippet in sandbox" "in a container of it"
[ ! -e "$home/store" ]
ok $? "still without a store of the user's own"

# Writes to the read-only store are refused, saying why.
as_user "$SR_BIN" image rm test/shared:1
is "$rc" 125 "the user cannot remove root's image"
like "$err" "image store $sys is read-only here \\(image_stores_readonly\\)" \
  "the message names the store and the setting"
as_user "$SR_BIN" image prune
is "$rc" 125 "nor prune root's store (with no store of its own)"
like "$err" "read-only" "saying so"

# The user's own store comes first, and takes the imports.
tar -C "$sr_tmp/layout" -cf "$sr_tmp/layout.tar" .
chmod 644 "$sr_tmp/layout.tar"
as_user "$SR_BIN" image import --quiet --name test/mine:1 "$sr_tmp/layout.tar"
is "$rc" 0 "the user imports into a store of its own"
[ -d "$home/store/images" ]
ok $? "which is made under its home"
grep -q test/mine "$sys/names.json"
ok $((! $?)) "root's name table is untouched"
as_user "$SR_BIN" image rm test/shared:1
is "$rc" 125 "an image only root's store has is still refused"
like "$err" "read-only" "with the same message"
as_user "$SR_BIN" image list
like "$out" "test/mine:1 .* $home/store\$" "image list shows the user's own image"
like "$out" "test/shared:1 .*\\(read-only\\)" "and root's, marked"

# Nothing in root's store is writable by the user.
is "$(runuser -u "$user" -- find "$sys" -writable 2>/dev/null)" "" \
  "no file or directory of root's store is writable by the user"
runuser -u "$user" -- sh -c ": >> '$sys/names.json'" 2>/dev/null
ok $((! $?)) "the name table cannot be written"
is "$(stat -c %a "$sys/images/$id.lock")" 644 "the image's lock file is there, readable"

# A run of the user holds the image: root's rm waits for it as for its own.
runuser -u "$user" -- env -i PATH=/usr/bin:/bin HOME="$home" XDG_RUNTIME_DIR="$home/run" \
  SANDBOX_HISTORY_DB="$home/history.db" SANDBOX_IMAGE_STORE="$home/store" \
  SANDBOX_IMAGE_STORES_READONLY="$sys" "$SR_BIN" run --timeout 30 --image test/shared:1 \
  -- sleep 20 >/dev/null 2>&1 &
runner=$!
at_exit "kill $runner 2>/dev/null; wait $runner 2>/dev/null"
held () { ! flock -n -x "$sys/images/$id.lock" true; }
wait_until 10 held
ok $? "the user's run holds a shared lock on the image"
SANDBOX_IMAGE_STORE=$sys run_sr image rm test/shared:1
is "$rc" 125 "root cannot remove the image while the user runs it"
like "$err" "in use by a running container" "saying so"
kill "$runner" 2>/dev/null
wait "$runner" 2>/dev/null

# A store that a third user owns, or others may write, is not read.
mkdir -m 0755 "$sr_tmp/theirs"
chown nobody "$sr_tmp/theirs"
as_user env SANDBOX_IMAGE_STORES_READONLY="$sr_tmp/theirs" "$SR_BIN" image list
is "$rc" 125 "a read-only store of another user is refused"
like "$err" "read-only image store $sr_tmp/theirs: owned by uid [0-9]+;" "naming it and its owner"
chown root "$sr_tmp/theirs"
chmod 0777 "$sr_tmp/theirs"
as_user env SANDBOX_IMAGE_STORES_READONLY="$sr_tmp/theirs" "$SR_BIN" image list
is "$rc" 125 "so is one that others may write"
like "$err" "writable by others" "saying so"
as_user env SANDBOX_IMAGE_STORES_READONLY="$sr_tmp/missing" "$SR_BIN" image list
is "$rc" 0 "a read-only store that does not exist is skipped"

# The default: root's /var/lib/sandbox-runner for every other user, none for root.
as_user env -u SANDBOX_IMAGE_STORES_READONLY "$SR_BIN" config show
like "$out" "image_stores_readonly *= */var/lib/sandbox-runner" \
  "a user reads root's store by default"
run_sr config show
like "$out" "image_stores_readonly *= *(\"\")?( |\$)" "root reads none"

done_testing
