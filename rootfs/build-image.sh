#!/bin/sh
# build-image.sh NAME: builds the image of rootfs/NAME.recipe from Debian
# trixie packages with mmdebstrap and writes it as an OCI image layout
# (oci-layout, index.json, one manifest, a config with Env/Cmd/WorkingDir and
# one gzip layer) that skopeo, umoci, podman and `sandbox-runner image import`
# read.
#
# Built once and cached outside the checkout, under $SR_IMAGE_CACHE
# (default /var/cache/sandbox-runner/images as root,
# ${XDG_CACHE_HOME:-~/.cache}/sandbox-runner/images otherwise).  The layout
# lands in NAME-KEY, KEY a hash of the recipe and of this script, so a
# changed recipe builds anew and an unchanged one never does.  NAME is a
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
key=$(cat "$recipe" "$0" | sha256sum | cut -c1-12)
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

description="" packages="" cmd='["sh"]' env_extra="" setup="" version=""
# shellcheck disable=SC1090
. "$recipe"

mkdir -p "$cache"
chmod 755 "$cache"
tmp=$(mktemp -d "$cache/.$name-$key.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# update-alternatives fails where a package's man page link has no
# directory (openjdk's postinst: /usr/share/man/man1, whose pages are
# excluded); the essential hook makes it before the recipe's packages.
# The recipe's setup, a shell script run as root inside the image once its
# packages are in (before the cleanup below), reaches the hook through the
# environment.
SR_RECIPE_SETUP=$setup
export SR_RECIPE_SETUP
# The recipe's version, a command whose first line of output says which
# version of the language the image holds; it becomes the image's
# org.opencontainers.image.version label, which list_supported_languages
# reports.
SR_RECIPE_VERSION=$version SR_RECIPE_VERSION_OUT=$tmp/version
export SR_RECIPE_VERSION SR_RECIPE_VERSION_OUT

# Reproducible timestamps: the newest of recipe and script.
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(stat -c %Y "$recipe" "$0" | sort -n | tail -1)}
export SOURCE_DATE_EPOCH

echo "build-image.sh: building $name from $suite ($packages)" >&2
# shellcheck disable=SC2086
mmdebstrap --mode="$mode" --variant=essential --format=tar \
  --include="$(echo $packages | tr ' ' ',')" \
  --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/info/*' \
  --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --essential-hook='mkdir -p "$1/usr/share/man/man1"' \
  --customize-hook='mkdir -p "$1/work" "$1/scratch" "$1/mnt/data"' \
  --customize-hook='[ -z "$SR_RECIPE_SETUP" ] || chroot "$1" sh -ec "$SR_RECIPE_SETUP"' \
  --customize-hook='[ -z "$SR_RECIPE_VERSION" ] || chroot "$1" sh -ec "$SR_RECIPE_VERSION" > "$SR_RECIPE_VERSION_OUT"' \
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/var/log/*' \
  --quiet \
  "$suite" "$tmp/layer.tar" "$mirror"

mkdir -p "$tmp/oci/blobs/sha256"
diff_id=$(sha256sum "$tmp/layer.tar" | cut -d' ' -f1)
gzip -n -6 < "$tmp/layer.tar" > "$tmp/layer.tar.gz"
rm -f "$tmp/layer.tar"
layer=$(sha256sum "$tmp/layer.tar.gz" | cut -d' ' -f1)
layer_size=$(stat -c %s "$tmp/layer.tar.gz")
mv "$tmp/layer.tar.gz" "$tmp/oci/blobs/sha256/$layer"

created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
# One line of printable text, nothing JSON would have to escape.
version_label=""
if [ -s "$tmp/version" ]; then
  version_label=$(head -1 "$tmp/version" | tr -d '"\\' | tr -cd '[:print:]')
  version_label=',"org.opencontainers.image.version":"'"$version_label"'"'
fi
env_json='"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","LANG=C.UTF-8"'
[ -z "$env_extra" ] || env_json="$env_json,$env_extra"

# blob FILE: moves FILE into the layout under its digest; prints "DIGEST SIZE".
blob () {
  d=$(sha256sum "$1" | cut -d' ' -f1)
  s=$(stat -c %s "$1")
  mv "$1" "$tmp/oci/blobs/sha256/$d"
  echo "$d $s"
}

printf '{"created":"%s","architecture":"amd64","os":"linux","config":{"Env":[%s],"Cmd":%s,"WorkingDir":"/work","Labels":{"org.opencontainers.image.description":"%s","org.opencontainers.image.title":"%s"%s}},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"history":[{"created":"%s","created_by":"rootfs/build-image.sh %s: mmdebstrap %s %s"}]}' \
  "$created" "$env_json" "$cmd" "$description" "$name" "$version_label" "$diff_id" "$created" "$name" "$suite" "$packages" \
  > "$tmp/config.json"
set -- $(blob "$tmp/config.json")
config_digest=$1 config_size=$2

printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:%s","size":%s}]}' \
  "$config_digest" "$config_size" "$layer" "$layer_size" > "$tmp/manifest.json"
set -- $(blob "$tmp/manifest.json")
manifest_digest=$1 manifest_size=$2

printf '{"imageLayoutVersion":"1.0.0"}' > "$tmp/oci/oci-layout"
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"platform":{"architecture":"amd64","os":"linux"},"annotations":{"org.opencontainers.image.ref.name":"latest"}}]}' \
  "$manifest_digest" "$manifest_size" > "$tmp/oci/index.json"

chmod -R a+rX "$tmp/oci"
mv "$tmp/oci" "$out"
point_name
# Older builds of this recipe are superseded.
h='[0-9a-f]'
for old in "$cache/$name"-$h$h$h$h$h$h$h$h$h$h$h$h; do
  [ "$old" = "$out" ] || [ ! -d "$old" ] || [ -L "$old" ] || rm -rf "$old"
done
echo "$out"
