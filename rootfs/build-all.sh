#!/bin/sh
# build-all.sh [--import]: builds the default images (rootfs/*.recipe) into
# the image cache, each only when its recipe changed; with --import, also
# imports each into the image store of `sandbox-runner` (found on PATH or
# in $SR_BIN) under the recipe's name.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
import=false
case ${1:-} in
  --import) import=true ;;
  "") ;;
  *) echo "usage: $0 [--import]" >&2; exit 2 ;;
esac
images=${SR_IMAGES:-python cpp python-data}

for name in $images; do
  layout=$("$here/build-image.sh" "$name")
  if $import; then
    "${SR_BIN:-sandbox-runner}" image import --name "$name" "$layout"
  fi
done
