#!/bin/sh
# The store's layer cache (issue 29): a layer is extracted once, whatever
# the number of images that use it, and each image's rootfs links its
# files from there: images that share a base hold its data once, removing
# one leaves the others whole, an upper layer's whiteout hides a base file
# in that image alone, a damaged extraction is found and not spread, and
# images installed whole by an older version keep running.
. "${SR_SRCDIR}/tests/integration/lib.sh"
require_busybox_rootfs
command -v python3 >/dev/null || skip_all "python3 is not installed (it builds the fixtures)"

export SANDBOX_IMAGE_STORE=$sr_tmp/store SANDBOX_RUNTIME_DIR=$sr_tmp/run
fixture () { python3 "$SR_SRCDIR/tests/helpers/oci-fixture.py" "$@"; }
store=$SANDBOX_IMAGE_STORE

# One base (the busybox rootfs and a file of its own), three uppers.
mkdir -p "$ROOTFS/etc"
echo "from the base" > "$ROOTFS/etc/base-file"
echo "hidden above" > "$ROOTFS/etc/hidden"
tar -C "$ROOTFS" -cf "$sr_tmp/base.tar" .
fixture tar "$sr_tmp/a.tar" "f:etc/which=a"
fixture tar "$sr_tmp/b.tar" "f:etc/which=b" "f:etc/.wh.hidden=" "f:etc/base-file=changed in b"
fixture tar "$sr_tmp/c.tar" "f:etc/which=c"
for n in a b c; do
  fixture layout "$sr_tmp/$n" --env PATH=/bin --cmd=/bin/cat --cmd=/etc/which \
    "$sr_tmp/base.tar" "$sr_tmp/$n.tar"
done
# base_hex: the digest of the base layer, as the layouts name it.
base_hex=$(python3 -c 'import json, sys
d = sys.argv[1]
m = json.load(open(d + "/index.json"))["manifests"][0]["digest"][7:]
print(json.load(open(d + "/blobs/sha256/" + m))["layers"][0]["digest"][7:])' "$sr_tmp/a")
tree=$store/layers/$base_hex/tree

# rootfs NAME: the rootfs of image NAME.
rootfs () {
  echo "$store/images/$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' \
    "$store/names.json" "$1")/rootfs"
}
# trees: how many layers the cache holds.
trees () { find "$store/layers" -mindepth 1 -maxdepth 1 -type d | wc -l; }

run_sr image import --quiet --name a "$sr_tmp/a"
ra=$rc
run_sr image import --quiet --name b "$sr_tmp/b"
is "$ra $rc" "0 0" "two images on one base import"
[ -f "$tree/bin/busybox" ]; ok $? "the base layer is extracted into the store's layer cache"
is "$(trees)" 3 "once: the cache holds the base and the two upper layers"
is "$(stat -c %i "$(rootfs a)/bin/busybox")" "$(stat -c %i "$(rootfs b)/bin/busybox")" \
  "two images sharing a base layer store its files once (same inode)"
is "$(stat -c %i "$(rootfs a)/bin/busybox")" "$(stat -c %i "$tree/bin/busybox")" \
  "linked from the cache"
[ "$(stat -c %i "$(rootfs a)/etc")" != "$(stat -c %i "$(rootfs b)/etc")" ]
ok $? "directories are each image's own"
used=$(du -sk "$store" | cut -f1)
[ "$used" -lt $(( $(du -sk "$ROOTFS" | cut -f1) * 2 )) ]
ok $? "the store holds less than two copies of the base (${used} KiB)"

# --- whiteouts and changes in the upper layer ---
[ ! -e "$(rootfs b)/etc/hidden" ]; ok $? "a whiteout in the upper layer hides the base file"
is "$(cat "$(rootfs a)/etc/hidden")" "hidden above" "in that image alone"
[ -f "$tree/etc/hidden" ]; ok $? "and not in the cache"
is "$(cat "$(rootfs b)/etc/base-file") $(cat "$(rootfs a)/etc/base-file")" \
  "changed in b from the base" "a file the upper layer changes is its own, the base's stays"
run_sr run --image b
is "$rc $out" "0 b" "the image with the whiteout runs"

# --- removing one keeps the other ---
run_sr image rm a
is "$rc" 0 "an image sharing its base is removed"
[ -f "$tree/bin/busybox" ]; ok $? "the base stays in the cache while another image uses it"
is "$(trees)" 2 "the layer only it used goes"
run_sr run --image b
is "$rc $out" "0 b" "removing one keeps the other runnable"
run_sr image import --quiet --name a "$sr_tmp/a"
is "$(stat -c %i "$(rootfs a)/bin/busybox")" "$(stat -c %i "$(rootfs b)/bin/busybox")" \
  "an image imported again links the base kept"

# A layer the cache holds counts against the caps as if it were extracted
# again: whether an image fits does not depend on what else is there.
SANDBOX_MAX_IMAGE_SIZE=1K run_sr image import --name small-c "$sr_tmp/c"
is "$rc" 125 "an image whose base the cache holds still passes max_image_size"
like "$err" "layer 1 of 2 \(sha256:$base_hex\): the image passes max_image_size \(1024 bytes" \
  "the error names the shared layer and the setting"

# --- a damaged extraction ---
# A file of the cache changed in place (its size and mtime), as a write
# through any of the images linked to it would change it.
printf 'not busybox' > "$tree/etc/base-file"
run_sr image import --name c "$sr_tmp/c"
is "$rc" 0 "an image on a damaged shared layer imports"
like "$err" "layer sha256:$base_hex: 1 file\\(s\\) of its extraction in the store .* missing or changed" \
  "a corrupt shared layer is detected, and named"
is "$(cat "$(rootfs c)/etc/base-file")" "from the base" "the new image has the layer's data, not the damage"
[ ! -e "$tree" ]; ok $? "and the damaged extraction is dropped"
run_sr image rm c
run_sr image import --quiet --name c "$sr_tmp/c"
is "$rc $(cat "$(rootfs c)/etc/base-file")" "0 from the base" "the next import extracts the layer anew"
[ -f "$tree/bin/busybox" ]; ok $? "into the cache"

# --- images installed whole, before the cache ---
# What an older version made: a rootfs of its own, no tree in the cache.
run_sr image rm a
run_sr image rm c
rm -rf "$store/layers/"*
run_sr run --image b
is "$rc $out" "0 b" "an image installed without the cache still runs"
run_sr image import --quiet --name a "$sr_tmp/a"
is "$rc $(trees)" "0 2" "a new image next to it extracts its layers into the cache"
run_sr image rm b
is "$rc" 0 "the older image is removed"
run_sr run --image a
is "$rc $out" "0 a" "and the new one runs on"

# --- prune ---
run_sr image rm a
run_sr image prune
is "$rc $(trees)" "0 0" "with no image left, no layer is kept"
[ -z "$(ls "$store/layers")" ]; ok $? "nor their lock files"

done_testing
