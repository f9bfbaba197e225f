#!/bin/sh
# run_code once per language of tests/integration/languages.sh through the
# official MCP client over stdio (tests/mcp/languages-client.mjs).  A
# language whose image is not built is skipped, unless tools/run-tests.sh
# built it for this run (named in $SR_IMAGES).
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
export SANDBOX_IMAGE_STORE=$sr_tmp/store
cache=${SR_IMAGE_CACHE:-/var/cache/sandbox-runner/images}
require_node_modules

SR_LANGUAGES=""
for lang in c javascript typescript go rust java bash ruby; do
  if [ -f "$cache/$lang/index.json" ]; then
    "$SR_BIN" image import --quiet --name "$lang" "$cache/$lang" >/dev/null 2>"$sr_tmp/import.err" ||
      { cat "$sr_tmp/import.err"; echo "Bail out! import of image $lang failed"; exit 1; }
    SR_LANGUAGES="$SR_LANGUAGES $lang"
  else
    case " ${SR_IMAGES:-} " in
      *" $lang "*) ok 1 "$lang: image built for this run (SR_IMAGES) is in $cache" ;;
      *) skip "$lang: image $lang is not built in $cache (rootfs/build-all.sh $lang)" ;;
    esac
  fi
done
export SR_LANGUAGES

run_mcp_client languages-client.mjs
[ -z "$(ls "$SANDBOX_RUNTIME_DIR/containers" 2>/dev/null)" ]; ok $? "no container is left after the server exits"
done_testing
