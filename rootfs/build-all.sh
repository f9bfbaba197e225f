#!/bin/sh
# build-all.sh [--import] [NAME...]: builds images of rootfs/NAME.recipe
# into the image cache, each only when its recipe changed; with --import,
# also imports each into the image store of `sandbox-runner` (found on
# PATH or in $SR_BIN) under the recipe's name.
#
# Without NAMEs it builds $SR_IMAGES, by default the images the default
# setup needs (python, cpp, python-data: the session image and the quick
# ones); NAME "all" stands for every recipe here.  tools/run-tests.sh
# builds them all for the test suite.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
import=false
case ${1:-} in
  --import) import=true; shift ;;
  -*) echo "usage: $0 [--import] [NAME...|all]" >&2; exit 2 ;;
esac
[ $# -gt 0 ] || set -- ${SR_IMAGES:-python cpp python-data}
images=""
for name in "$@"; do
  if [ "$name" = all ]; then
    images="$images $(cd "$here" && ls ./*.recipe | sed 's|^\./||; s|\.recipe$||' | tr '\n' ' ')"
  else
    images="$images $name"
  fi
done

for name in $images; do
  layout=$("$here/build-image.sh" "$name")
  if $import; then
    "${SR_BIN:-sandbox-runner}" image import --name "$name" "$layout"
  fi
done
