#!/bin/sh
# The image store: import of OCI layouts and docker-save archives, layer
# semantics (whiteouts, opaque dirs, links), hostile archives, digests,
# and list/inspect/rm/prune/run --image.
. "${SR_SRCDIR}/tests/integration/lib.sh"
require_busybox_rootfs
command -v python3 >/dev/null || skip_all "python3 is not installed (it builds the fixtures)"

export SANDBOX_IMAGE_STORE=$sr_tmp/store SANDBOX_RUNTIME_DIR=$sr_tmp/run
fixture () { python3 "$SR_SRCDIR/tests/helpers/oci-fixture.py" "$@"; }
store=$SANDBOX_IMAGE_STORE

tar -C "$ROOTFS" -cf "$sr_tmp/base.tar" .

# --- an OCI layout, as a directory and as a tar ---
fixture tar "$sr_tmp/l2.tar" "f:etc/motd=hello from layer two" "f:etc/gone=x" "d:opq" "f:opq/old=1" \
  "f:bin/setuid-tool=#!/bin/sh:4755" "d:var/spool:1777" "f:var/open=x:666" "d:var/group:775"
fixture tar "$sr_tmp/l3.tar" "f:etc/.wh.gone=" "f:opq/.wh..wh..opq=" "f:opq/new=2" \
  "l:etc/link-motd>motd" "h:etc/hard-motd>etc/motd"
fixture layout "$sr_tmp/layout" --env GREETING=hi --env PATH=/bin --workdir /etc \
  --cmd=/bin/cat --cmd=motd "$sr_tmp/base.tar" "$sr_tmp/l2.tar" "$sr_tmp/l3.tar"

run_sr image import --name test/busybox:1 "$sr_tmp/layout"
is "$rc" 0 "an OCI layout imports"
id=$(printf '%s' "$out" | cut -d' ' -f2)
like "$id" "^[0-9a-f]{64}$" "import prints the image id"
like "$err" "extracted layer 3/3" "import reports progress per layer"
rootfs=$store/images/$id/rootfs

run_sr image list
like "$out" "test/busybox:1 +${id%"${id#????????????}"} .* 3 " "image list shows the name, id and layers"
run_sr image inspect test/busybox:1
is "$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["working_dir"])')" \
  /etc "inspect shows the config"

run_sr run --image test/busybox:1
is "$out" "hello from layer two" "run --image runs the image's Cmd in its WorkingDir"
run_sr run --image test/busybox:1 -- sh -c 'echo "$GREETING $PATH"'
is "$out" "hi /bin" "run --image takes the image's Env"
run_sr run --image test/busybox:1 --env GREETING=bye -- sh -c 'echo $GREETING'
is "$out" "bye" "--env overrides the image's Env"

[ ! -e "$rootfs/etc/gone" ]; ok $? "a whiteout deletes the file of a lower layer"
[ ! -e "$rootfs/opq/old" ] && [ -f "$rootfs/opq/new" ]
ok $? "an opaque dir hides the lower layer's entries, keeps its own"
is "$(readlink "$rootfs/etc/link-motd")" motd "symlinks are kept as they are"
is "$(stat -c %i "$rootfs/etc/hard-motd")" "$(stat -c %i "$rootfs/etc/motd")" "hardlinks are links"
is "$(stat -c %a "$rootfs/bin/setuid-tool")" 755 "setuid bits are cleared"
is "$(stat -c %a "$rootfs/var/spool") $(stat -c %a "$rootfs/var/open") $(stat -c %a "$rootfs/var/group")" \
  "1755 644 755" "no entry is writable by group or others: the store is shared, the rootfs read-only"

# A store an older version filled keeps such bits until it is next
# opened: then they go, once (the marker says so), symlinks not followed.
chmod 1777 "$rootfs/var/spool"
chmod 666 "$rootfs/var/open"
: > "$sr_tmp/symlink-target"
chmod 666 "$sr_tmp/symlink-target"
ln -s "$sr_tmp/symlink-target" "$rootfs/var/spool/to-outside"
rm "$store/shared-modes"
run_sr image list
is "$rc $(stat -c %a "$rootfs/var/spool") $(stat -c %a "$rootfs/var/open")" "0 1755 644" \
  "the next open of an older store clears group and others' write"
is "$(stat -c %a "$sr_tmp/symlink-target")" 666 "and leaves the target of a symlink alone"
[ -f "$store/shared-modes" ]; ok $? "and records that it did"
rm "$rootfs/var/spool/to-outside"
[ ! -e "$rootfs/etc/.wh.gone" ] && [ ! -e "$rootfs/opq/.wh..wh..opq" ]
ok $? "whiteout markers are not extracted"
for d in proc sys dev tmp work scratch mnt/data; do
  [ -d "$rootfs/$d" ] || echo "# missing /$d"
done
[ -d "$rootfs/mnt/data" ] && [ -d "$rootfs/scratch" ]; ok $? "the runtime's mount points exist"

tar -C "$sr_tmp/layout" -czf "$sr_tmp/layout.tar.gz" .
run_sr image import "$sr_tmp/layout.tar.gz"
is "$rc" 0 "a tar of an OCI layout imports"
like "$out" "^layout $id\$" "it is the same image, named after the file"

fixture layout "$sr_tmp/plain" --plain "$sr_tmp/base.tar"
run_sr image import --name plain "$sr_tmp/plain"
is "$rc" 0 "uncompressed layers import"
if command -v zstd >/dev/null; then
  fixture layout "$sr_tmp/zstd" --zstd "$sr_tmp/base.tar" "$sr_tmp/l2.tar"
  run_sr image import --name zstd "$sr_tmp/zstd"
  is "$rc" 0 "zstd layers import"
  run_sr run --image zstd -- cat /etc/motd
  is "$out" "hello from layer two" "and apply"
else
  skip "zstd is not installed (apt-get install zstd)"
fi

# Two imports of one image at once: both succeed, one rootfs is made.
"$SR_BIN" image import -q --name twin-a "$sr_tmp/layout" > "$sr_tmp/twin-a" 2>&1 &
twin=$!
run_sr image import -q --name twin-b "$sr_tmp/layout"
wait $twin
twin_rc=$?
is "$rc $twin_rc" "0 0" "concurrent imports of one image both succeed"
is "$(ls "$store/images" | grep -c "^$id\$")" 1 "and make one image"
run_sr image inspect twin-a
like "$out" '"twin-b"' "which carries both names"

# --- a docker-save archive ---
fixture docker "$sr_tmp/docker.tar" --tag example/busybox:docker "$sr_tmp/base.tar" "$sr_tmp/l2.tar"
run_sr image import "$sr_tmp/docker.tar"
is "$rc" 0 "a docker-save archive imports"
like "$out" "^example/busybox:docker " "and takes its RepoTags name"
run_sr run --image example/busybox:docker -- sh -c 'echo "$(cat /etc/motd)"; echo $FROM_DOCKER'
is "$out" "hello from layer two
1" "its layers and Env apply"

# --- digests ---
cp -r "$sr_tmp/layout" "$sr_tmp/bad"
layer=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1]+"/index.json"))["manifests"][0]["digest"][7:]
print(json.load(open(sys.argv[1]+"/blobs/sha256/"+m))["layers"][1]["digest"][7:])' "$sr_tmp/bad")
printf 'X' | dd of="$sr_tmp/bad/blobs/sha256/$layer" bs=1 seek=100 conv=notrunc 2>/dev/null
rm -rf "$store"
run_sr image import --name bad "$sr_tmp/bad"
is "$rc" 125 "a blob that does not match its digest is refused"
like "$err" "blob sha256:$layer: digest mismatch: the content hashes to sha256:[0-9a-f]{64}" \
  "the error names the blob and what it hashed to"
[ ! -e "$store/blobs/sha256/$layer" ] && [ -z "$(ls "$store/images")" ] && [ -z "$(ls "$store/tmp" | grep -v partial)" ]
ok $? "nothing of the bad import is left in the store"

# --- hostile archives ---
hostile () {
  # hostile NAME ENTRY...: a layout with the busybox base and one hostile layer
  name=$1
  shift
  fixture tar "$sr_tmp/$name.tar" "$@"
  rm -rf "$sr_tmp/$name"
  fixture layout "$sr_tmp/$name" "$sr_tmp/base.tar" "$sr_tmp/$name.tar"
  run_sr image import --name "$name" "$sr_tmp/$name"
}
outside=$sr_tmp/outside
mkdir -p "$outside"

hostile dotdot "f:../../../../../../$outside/escaped=pwned"
is "$rc" 125 "an entry with .. is refused"
like "$err" "entry \.\./.*escaped: the path leaves the rootfs" "the error names the entry"
[ ! -e "$outside/escaped" ]; ok $? "nothing was written outside"

hostile absolute "f:/etc/absolute=inside"
is "$rc" 0 "an absolute entry is made relative"
like "$err" "warning: .*entry /etc/absolute has an absolute name; extracted as etc/absolute" \
  "with a warning naming it"
aid=$(printf '%s' "$out" | cut -d' ' -f2)
[ -f "$store/images/$aid/rootfs/etc/absolute" ]; ok $? "and lands inside the rootfs"

# /etc exists on the host and in the base: a symlink to it, absolute or
# climbing with .., must lead to the rootfs's /etc.
hostile symparent "l:escape>/etc" "f:escape/through-link=inside" "l:up>../../../../../.." \
  "f:up/etc/through-up=inside"
is "$rc" 0 "entries below symlinked parents import"
sid=$(printf '%s' "$out" | cut -d' ' -f2)
[ ! -e /etc/through-link ] && [ ! -e /etc/through-up ]
ok $? "a symlinked parent never leads outside"
[ -f "$store/images/$sid/rootfs/etc/through-link" ] && [ -f "$store/images/$sid/rootfs/etc/through-up" ]
ok $? "it resolves inside the rootfs, as in the container"

# A rename anywhere on the host while a layer's symlink walks ".." makes
# openat2 answer EAGAIN (the kernel cannot tell the walk stayed inside);
# an import tries again and never fails for it.
python3 -c 'import os, sys, time
d = sys.argv[1]
os.makedirs(d)
open(d + "/a", "w").close()
end = time.time() + 120
while time.time() < end and not os.path.exists(d + "/stop"):
    os.rename(d + "/a", d + "/b")
    os.rename(d + "/b", d + "/a")' "$sr_tmp/renamer" &
renamer=$!
rename_failures=0 rename_err=""
for i in $(seq 1 40); do
  rm -rf "$sr_tmp/rename-store"
  if ! SANDBOX_IMAGE_STORE=$sr_tmp/rename-store "$SR_BIN" image import --name symparent \
    "$sr_tmp/symparent" >/dev/null 2>"$sr_tmp/rename-err"; then
    rename_failures=$((rename_failures + 1))
    rename_err=$(tail -n 1 "$sr_tmp/rename-err")
  fi
done
touch "$sr_tmp/renamer/stop"
wait "$renamer"
is "$rename_failures" 0 "40 imports through symlinked parents hold while the host renames files${rename_err:+ (last: $rename_err)}"
hostile dangling "l:escape>$outside" "f:escape/through-link=pwned"
is "$rc" 125 "an entry below a symlink to a host-only directory is refused"
like "$err" "entry escape/through-link: its parent escape is a symlink to nothing inside the rootfs" \
  "naming the entry"
[ ! -e "$outside/through-link" ]; ok $? "and nothing lands on the host"

echo secret > "$outside/secret"
hostile hardout "h:stolen>../../../../../../$outside/secret"
is "$rc" 125 "a hardlink to a path with .. is refused"
like "$err" "entry stolen: hardlink target .* leaves the rootfs" "naming the entry"
hostile hardabs "h:stolen>$outside/secret"
is "$rc" 125 "a hardlink to a host path resolves inside the rootfs and finds nothing"
like "$err" "entry stolen: hardlink target" "naming the entry"

hostile devices "c:dev-null-copy" "p:a-fifo"
is "$rc" 0 "a layer with device nodes imports"
did=$(printf '%s' "$out" | cut -d' ' -f2)
[ ! -e "$store/images/$did/rootfs/dev-null-copy" ] && [ -p "$store/images/$did/rootfs/a-fifo" ]
ok $? "device nodes are skipped, fifos made"
like "$err" "skipped 1 device nodes" "the skip is reported"

hostile replacedir "f:bin=not a dir any more"
is "$rc" 0 "a file may replace a directory of a lower layer"
[ -f "$store/images/$(printf '%s' "$out" | cut -d' ' -f2)/rootfs/bin" ]; ok $? "and does"

[ -z "$(ls "$outside" | grep -v secret)" ]; ok $? "nothing at all appeared outside"

run_sr image import "$sr_tmp/nonexistent"
is "$rc" 125 "a missing path is an error"
like "$err" "import .*nonexistent: No such file or directory" "naming it"
mkdir -p "$sr_tmp/empty"
run_sr image import "$sr_tmp/empty"
like "$err" "neither an OCI image layout \(no index.json\) nor a docker-save archive" \
  "a directory that is no image says what it lacks"

# --- caps on what an image expands to (max_image_size, max_image_entries) ---
# bomb NAME ENTRY...: a one-layer layout (gzipped), without the base.
bomb () {
  bomb_name=$1
  shift
  fixture tar "$sr_tmp/$bomb_name.tar" "$@"
  rm -rf "$sr_tmp/$bomb_name"
  fixture layout "$sr_tmp/$bomb_name" "$sr_tmp/$bomb_name.tar"
}
# nothing_left NAME: no image, name or extraction of a refused import.
nothing_left () {
  ! "$SR_BIN" image inspect "$1" >/dev/null 2>&1 \
    && [ "$(ls "$store/images" | grep -vc '\.lock$')" -eq "$images_before" ] \
    && [ -z "$(ls "$store/tmp" | grep '^x-')" ]
}
images_before=$(ls "$store/images" | grep -vc '\.lock$')
bomb sizebomb "z:zeros=4194304"
[ "$(du -k "$sr_tmp/sizebomb" | tail -1 | cut -f1)" -lt 100 ]; ok $? "4 MiB of zeros gzip to a small layer"
SANDBOX_MAX_IMAGE_SIZE=1M run_sr image import --name sizebomb "$sr_tmp/sizebomb"
is "$rc" 125 "a layer that expands past max_image_size is refused"
like "$err" "import .*sizebomb: layer 1 of 1 \(sha256:[0-9a-f]{64}\): entry zeros: the image passes max_image_size \(1048576 bytes of file data\); raise that setting" \
  "the error names the image, the layer, the entry, the cap and the setting"
nothing_left sizebomb; ok $? "and leaves no image, name or extraction behind"
SANDBOX_MAX_IMAGE_SIZE=4M run_sr image import --name sizebomb "$sr_tmp/sizebomb"
is "$rc" 0 "a layer that expands to exactly max_image_size imports"
run_sr image rm sizebomb
# A small valid layout, padded with 4 MiB of zeros that compress away.
bomb outerbomb "f:etc/motd=small"
head -c 4194304 /dev/zero > "$sr_tmp/outerbomb/zeros"
tar -C "$sr_tmp/outerbomb" -czf "$sr_tmp/outerbomb.tar.gz" .
SANDBOX_MAX_IMAGE_SIZE=1M run_sr image import --name outerbomb "$sr_tmp/outerbomb.tar.gz"
is "$rc" 125 "an image archive that unpacks past max_image_size is refused"
like "$err" "unpack .*outerbomb.tar.gz: entry zeros: the image passes max_image_size" "naming the archive"
nothing_left outerbomb; ok $? "and leaves nothing behind"

# What a file costs on disk counts: a sparse file's holes and a hard link's
# second name add no bytes.
mkdir -p "$sr_tmp/sparse-src"
truncate -s 1G "$sr_tmp/sparse-src/sparse"
echo data >> "$sr_tmp/sparse-src/sparse"
tar --sparse -C "$sr_tmp/sparse-src" -cf "$sr_tmp/sparse.tar" sparse
fixture layout "$sr_tmp/sparse" "$sr_tmp/sparse.tar"
SANDBOX_MAX_IMAGE_SIZE=1M run_sr image import --name sparse "$sr_tmp/sparse"
is "$rc" 0 "a sparse file of 1 GiB with 5 bytes of data fits in a cap of 1M"
is "$(stat -c %s "$store/images/$(printf '%s' "$out" | cut -d' ' -f2)/rootfs/sparse")" 1073741829 \
  "and keeps its apparent size"
run_sr image rm sparse
bomb links "z:file=614400" "h:second>file" "h:third>file"
SANDBOX_MAX_IMAGE_SIZE=1M run_sr image import --name links "$sr_tmp/links"
is "$rc" 0 "a file of 600 KiB with two more hard links fits in a cap of 1M"
run_sr image rm links

bomb inodebomb "n:many=100"
SANDBOX_MAX_IMAGE_ENTRIES=100 run_sr image import --name inodebomb "$sr_tmp/inodebomb"
is "$rc" 125 "a layer that makes more than max_image_entries names is refused"
like "$err" "layer 1 of 1 \(sha256:[0-9a-f]{64}\): entry many/99: the image passes max_image_entries \(100 files, directories and links\); raise that setting" \
  "the error names the layer, the entry, the cap and the setting"
nothing_left inodebomb; ok $? "and leaves nothing behind"
SANDBOX_MAX_IMAGE_ENTRIES=101 run_sr image import --name inodebomb "$sr_tmp/inodebomb"
is "$rc" 0 "100 files and their directory fit in 101 entries"
run_sr image rm inodebomb

# --- rm, prune, locking ---
run_sr image import --name keep "$sr_tmp/layout"
kid=$(printf '%s' "$out" | cut -d' ' -f2)
run_sr image rm "${kid%"${kid#????????????}"}"
is "$rc" 125 "rm by id of a named image needs --force"
# The run holds the image from before its command starts until it ends:
# the command runs until it is killed, once rm has been refused.
held=60.$$
"$SR_BIN" run --image keep -- sleep "$held" >/dev/null 2>&1 &
bg=$!
at_exit "kill $bg 2>/dev/null"
holding () { pgrep -f "^sleep $held" >/dev/null; }
wait_until 30 holding
run_sr image rm keep
is "$rc" 125 "rm of an image a container is running refuses"
like "$err" "in use by a running container" "and says why"
kill -KILL $(pgrep -f "^sleep $held") 2>/dev/null
wait $bg
run_sr image rm keep
is "$rc" 0 "rm of its last name removes the image"
[ ! -e "$store/images/$kid" ]; ok $? "its rootfs is gone"
run_sr run --image keep -- true
is "$rc" 125 "a removed image cannot run"
like "$err" "no image keep in the store" "the error names it"

blobs_before=$(ls "$store/blobs/sha256" | wc -l)
run_sr image prune
is "$rc" 0 "prune runs"
like "$out" "removed [0-9]+ images without a name and [1-9][0-9]* unused blobs" "prune removes unused blobs"
[ "$(ls "$store/blobs/sha256" | wc -l)" -lt "$blobs_before" ]; ok $? "fewer blobs afterwards"
run_sr run --image absolute -- cat /etc/absolute
is "$out" inside "named images survive prune"

# A work directory is a live writer's while its flock is held, whatever
# its age.
mkdir -p "$store/tmp/x-crashed-import/rootfs" "$store/tmp/x-live-writer"
flock "$store/tmp/x-live-writer" sleep 120 &
writer=$!
writer_holds () { ! flock -n "$store/tmp/x-live-writer" true; }
wait_until 30 writer_holds
run_sr image list
[ ! -e "$store/tmp/x-crashed-import" ]; ok $? "what a crashed import left in tmp/ goes at the next open"
[ -d "$store/tmp/x-live-writer" ]; ok $? "a directory a live writer holds locked stays"
kill $writer
wait $writer 2>/dev/null
rm -rf "$store/tmp/x-live-writer"

# kill -9 in the middle of a real extraction: no half image, and the
# next command clears what it left.
big=${SR_IMAGE_CACHE:-/var/cache/sandbox-runner/images}/cpp
if [ -f "$big/index.json" ]; then
  "$SR_BIN" image import -q --name half "$big" >/dev/null 2>&1 &
  victim=$!
  for i in $(seq 1 100); do
    [ -n "$(ls "$store/tmp" | grep '^x-')" ] && [ -n "$(ls "$store/tmp"/x-*/rootfs 2>/dev/null)" ] && break
    sleep 0.05
  done
  kill -9 $victim
  wait $victim 2>/dev/null
  run_sr image inspect half
  is "$rc" 125 "an import killed mid-extraction leaves no image"
  run_sr image list
  left=$(ls "$store/tmp" | grep '^x-')
  [ -z "$left" ]; ok $? "and its half extraction goes at the next open"
  [ -z "$left" ] || { ls -la "$store/tmp" "$store/tmp"/x-*; echo "$err"; } | sed 's/^/# /'
  run_sr image import -q --name half "$big"
  is "$rc" 0 "the import then succeeds"
else
  skip "the cpp image is not built (rootfs/build-all.sh): no large import to kill"
  skip "the cpp image is not built"
  skip "the cpp image is not built"
fi

done_testing
