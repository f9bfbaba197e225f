#!/bin/sh
# build-image.sh NAME: builds the image of rootfs/NAME.recipe from Debian
# trixie packages with mmdebstrap and writes it as an OCI image layout
# (oci-layout, index.json, one manifest, a config with Env/Cmd/WorkingDir and
# gzip layers) that skopeo, umoci, podman and `sandbox-runner image import`
# read.
#
# The layers are shared, so that a store holds trixie's essential set once
# and not once per language (the store extracts a layer once, whatever the
# number of images that use it):
#   1. the Debian base: trixie's essential set, built once (base-KEY in the
#      cache) and the same bytes, so the same digest, in every image;
#   2. the layers of the image the recipe's base= names, when it names one
#      (cpp and rust on c's compiler, python-data on python, typescript on
#      javascript);
#   3. a layer of the recipe's own, holding only what differs: each image
#      is built whole with mmdebstrap (its base's packages and setup, then
#      its own) and layer-diff.py keeps the entries that are new or changed
#      from the layers below, with a whiteout for each one gone.  A mirror
#      that moved between two builds makes that layer larger, never wrong.
#
# Built once and cached outside the checkout, under $SR_IMAGE_CACHE
# (default /var/cache/sandbox-runner/images as root,
# ${XDG_CACHE_HOME:-~/.cache}/sandbox-runner/images otherwise).  The layout
# lands in NAME-KEY, KEY a hash of the recipe and of this script, so a
# changed recipe (or base) builds anew and an unchanged one never does.  NAME is a
# symlink to the current build.  Prints the layout's path.
set -eu

usage () { echo "usage: $0 NAME   (a recipe in $(dirname "$0")/NAME.recipe)" >&2; exit 2; }
[ $# -eq 1 ] || usage
name=$1
here=$(cd "$(dirname "$0")" && pwd)
recipe=$here/$name.recipe
[ -f "$recipe" ] || { echo "build-image.sh: no recipe $recipe" >&2; exit 2; }

if [ "$(id -u)" -eq 0 ]; then
  cache=${SR_IMAGE_CACHE:-/var/cache/sandbox-runner/images}
  mode=root
else
  cache=${SR_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sandbox-runner/images}
  mode=unshare
fi
suite=${SR_IMAGE_SUITE:-trixie}
mirror=${SR_IMAGE_MIRROR:-http://deb.debian.org/debian}
diff_tool=$here/layer-diff.py
description="" packages="" cmd='["sh"]' env_extra="" setup="" version="" base=""
# shellcheck disable=SC1090
. "$recipe"

mkdir -p "$cache"
chmod 755 "$cache"
# Reproducible timestamps, one for every layer: the script's.
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(stat -c %Y "$0")}
export SOURCE_DATE_EPOCH

# Names uid and gid 1000, the user run_code and sessions run as by default
# (SR_DEFAULT_USER in src/common/defaults.h), so that whoami, id -un and
# getpass.getuser() answer inside.
sandbox_user_hook='grep -q "^[^:]*:[^:]*:1000:" "$1/etc/passwd" || {
  echo "sandbox:x:1000:1000:sandbox:/work:/bin/bash" >> "$1/etc/passwd"
  echo "sandbox:x:1000:" >> "$1/etc/group"
  [ ! -f "$1/etc/shadow" ] || echo "sandbox:*:20000:0:99999:7:::" >> "$1/etc/shadow"
}'

# build_tree OUT.tar PACKAGES: trixie's essential set and PACKAGES, with
# $SR_RECIPE_SETUP run inside, as a tar.
build_tree () {
  # update-alternatives fails where a package's man page link has no
  # directory (openjdk's postinst: /usr/share/man/man1, whose pages are
  # excluded); the essential hook makes it before the recipe's packages.
  # The setup, a shell script run as root inside the image once its
  # packages are in (before the cleanup below), and the version command
  # reach the hooks through the environment.
  # shellcheck disable=SC2086
  mmdebstrap --mode="$mode" --variant=essential --format=tar \
    ${2:+--include="$(echo $2 | tr ' ' ',')"} \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --essential-hook='mkdir -p "$1/usr/share/man/man1"' \
    --customize-hook='mkdir -p "$1/work" "$1/scratch" "$1/mnt/data"' \
    --customize-hook="$sandbox_user_hook" \
    --customize-hook='[ -z "$SR_RECIPE_SETUP" ] || chroot "$1" sh -ec "$SR_RECIPE_SETUP"' \
    --customize-hook='[ -z "$SR_RECIPE_VERSION" ] || chroot "$1" sh -ec "$SR_RECIPE_VERSION" > "$SR_RECIPE_VERSION_OUT"' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/var/log/*' \
    --quiet \
    "$suite" "$1" "$mirror"
}

# add_layer DIR TAR CREATED_BY: gzips TAR into DIR/blobs and appends it to
# DIR/sr-build/layers ("DIGEST SIZE DIFF_ID CREATED_BY", one a line).
add_layer () {
  diff_id=$(sha256sum "$2" | cut -d' ' -f1)
  gzip -n -6 < "$2" > "$2.gz"
  rm -f "$2"
  d=$(sha256sum "$2.gz" | cut -d' ' -f1)
  echo "$d $(stat -c %s "$2.gz") $diff_id $3" >> "$1/sr-build/layers"
  mv "$2.gz" "$1/blobs/sha256/$d"
}

# supersede PREFIX KEPT: older builds PREFIX-KEY go (the layouts that use
# their layers hold copies).
supersede () {
  h='[0-9a-f]'
  for old in "$1"-$h$h$h$h$h$h$h$h$h$h$h$h; do
    [ "$old" = "$2" ] || [ ! -d "$old" ] || [ -L "$old" ] || rm -rf "$old"
  done
}

# What the image is built on: the sr-build/ of a layout (or of the Debian
# base) says which layers, packages and setup it holds, and its tree.
if [ -n "$base" ]; then
  lower=$("$0" "$base")
else
  lower=$cache/base-$(cat "$0" "$diff_tool" | sha256sum | cut -c1-12)
  if [ ! -f "$lower/sr-build/layers" ]; then
    tmp=$(mktemp -d "$lower.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT INT TERM
    mkdir -p "$tmp/blobs/sha256" "$tmp/sr-build"
    echo "build-image.sh: building the Debian base layer from $suite" >&2
    SR_RECIPE_SETUP="" SR_RECIPE_VERSION="" SR_RECIPE_VERSION_OUT=/dev/null
    export SR_RECIPE_SETUP SR_RECIPE_VERSION SR_RECIPE_VERSION_OUT
    build_tree "$tmp/layer.tar" ""
    python3 "$diff_tool" tree "$tmp/layer.tar" "$tmp/sr-build/tree"
    add_layer "$tmp" "$tmp/layer.tar" "rootfs/build-image.sh: mmdebstrap $suite essential"
    : > "$tmp/sr-build/packages"
    : > "$tmp/sr-build/setup"
    chmod -R a+rX "$tmp"
    mv "$tmp" "$lower"
    trap - EXIT INT TERM
    supersede "$cache/base" "$lower"
  fi
fi
key=$( (cat "$recipe" "$0" "$diff_tool"; basename "$lower") | sha256sum | cut -c1-12)
out=$cache/$name-$key

# NAME names the build of the recipe as it is now, built or found.
point_name () {
  [ "$(readlink "$cache/$name" 2>/dev/null)" = "$name-$key" ] && return 0
  ln -sfn "$name-$key" "$cache/.$name.link"
  mv -T "$cache/.$name.link" "$cache/$name"
}

if [ -f "$out/index.json" ]; then
  point_name
  echo "$out"
  exit 0
fi

tmp=$(mktemp -d "$cache/.$name-$key.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$tmp/oci/blobs/sha256" "$tmp/oci/sr-build"

# The whole image: the packages and setup of what it is built on, then its
# own.  The recipe's version, a command whose first line of output says
# which version of the language the image holds, becomes the image's
# org.opencontainers.image.version label, which list_supported_languages
# reports.
all_packages=$(printf '%s %s' "$(cat "$lower/sr-build/packages")" "$packages" | xargs)
SR_RECIPE_SETUP=$(cat "$lower/sr-build/setup"; printf '%s\n' "$setup")
SR_RECIPE_VERSION=$version SR_RECIPE_VERSION_OUT=$tmp/version
export SR_RECIPE_SETUP SR_RECIPE_VERSION SR_RECIPE_VERSION_OUT
echo "build-image.sh: building $name from $suite ($all_packages) on $(basename "$lower")" >&2
build_tree "$tmp/full.tar" "$all_packages"

# The layers below, as they are (hard links in the cache), then the
# difference.
while read -r d _; do
  ln "$lower/blobs/sha256/$d" "$tmp/oci/blobs/sha256/$d" 2>/dev/null \
    || cp "$lower/blobs/sha256/$d" "$tmp/oci/blobs/sha256/$d"
done < "$lower/sr-build/layers"
cp "$lower/sr-build/layers" "$tmp/oci/sr-build/layers"
python3 "$diff_tool" diff "$lower/sr-build/tree" "$tmp/full.tar" "$tmp/layer.tar" \
  "$tmp/oci/sr-build/tree"
rm -f "$tmp/full.tar"
add_layer "$tmp/oci" "$tmp/layer.tar" "rootfs/build-image.sh $name: mmdebstrap $suite $packages"
printf '%s\n' "$all_packages" > "$tmp/oci/sr-build/packages"
printf '%s\n' "$SR_RECIPE_SETUP" > "$tmp/oci/sr-build/setup"

created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
# One line of printable text, nothing JSON would have to escape.
version_label=""
if [ -s "$tmp/version" ]; then
  version_label=$(head -1 "$tmp/version" | tr -d '"\\' | tr -cd '[:print:]')
  version_label=',"org.opencontainers.image.version":"'"$version_label"'"'
fi
env_json='"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","LANG=C.UTF-8"'
[ -z "$env_extra" ] || env_json="$env_json,$env_extra"
diff_ids="" history="" layers=""
while read -r d size diff_id created_by; do
  diff_ids="$diff_ids${diff_ids:+,}\"sha256:$diff_id\""
  history="$history${history:+,}{\"created\":\"$created\",\"created_by\":\"$created_by\"}"
  layers="$layers${layers:+,}{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar+gzip\",\"digest\":\"sha256:$d\",\"size\":$size}"
done < "$tmp/oci/sr-build/layers"

# blob FILE: moves FILE into the layout under its digest; prints "DIGEST SIZE".
blob () {
  d=$(sha256sum "$1" | cut -d' ' -f1)
  s=$(stat -c %s "$1")
  mv "$1" "$tmp/oci/blobs/sha256/$d"
  echo "$d $s"
}

printf '{"created":"%s","architecture":"amd64","os":"linux","config":{"Env":[%s],"Cmd":%s,"WorkingDir":"/work","Labels":{"org.opencontainers.image.description":"%s","org.opencontainers.image.title":"%s"%s}},"rootfs":{"type":"layers","diff_ids":[%s]},"history":[%s]}' \
  "$created" "$env_json" "$cmd" "$description" "$name" "$version_label" "$diff_ids" "$history" \
  > "$tmp/config.json"
set -- $(blob "$tmp/config.json")
config_digest=$1 config_size=$2

printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[%s]}' \
  "$config_digest" "$config_size" "$layers" > "$tmp/manifest.json"
set -- $(blob "$tmp/manifest.json")
manifest_digest=$1 manifest_size=$2

printf '{"imageLayoutVersion":"1.0.0"}' > "$tmp/oci/oci-layout"
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"platform":{"architecture":"amd64","os":"linux"},"annotations":{"org.opencontainers.image.ref.name":"latest"}}]}' \
  "$manifest_digest" "$manifest_size" > "$tmp/oci/index.json"

chmod -R a+rX "$tmp/oci"
mv "$tmp/oci" "$out"
point_name
supersede "$cache/$name" "$out"
echo "$out"
