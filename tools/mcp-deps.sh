#!/bin/sh
# Installs the npm packages of tests/mcp (the official MCP TypeScript SDK,
# the conformance suite and Node.js 22 for it) once per lock file into a
# cache outside the checkout, and prints the node_modules directory.
#   SR_NODE_CACHE  where (default /var/cache/sandbox-runner/node as root,
#                  ~/.cache/sandbox-runner/node otherwise)
set -eu

here=$(cd "$(dirname "$0")/../tests/mcp" && pwd)
if [ "$(id -u)" -eq 0 ]; then
  cache=${SR_NODE_CACHE:-/var/cache/sandbox-runner/node}
else
  cache=${SR_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sandbox-runner/node}
fi
key=$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -c1-12)
dir=$cache/$key

if [ ! -f "$dir/.complete" ]; then
  command -v npm >/dev/null || { echo "mcp-deps.sh: npm is not installed (apt-get install npm)" >&2; exit 1; }
  mkdir -p "$cache"
  tmp=$(mktemp -d "$cache/.tmp.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT INT TERM
  cp "$here/package.json" "$here/package-lock.json" "$tmp/"
  (cd "$tmp" && npm ci --no-audit --no-fund --loglevel=error >&2)
  touch "$tmp/.complete"
  chmod -R a+rX "$tmp"
  rm -rf "$dir"
  mv "$tmp" "$dir"
fi
echo "$dir/node_modules"
