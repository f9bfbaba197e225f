#!/bin/sh
# The manual pages lint clean under mandoc.
command -v mandoc >/dev/null || { echo "1..0 # SKIP mandoc is not installed"; exit 0; }
n=0 failed=0
for page in "$SR_SRCDIR"/man/*.[1-8]; do
  n=$((n + 1))
  if out=$(mandoc -T lint -W warning "$page" 2>&1) && [ -z "$out" ]; then
    echo "ok $n - ${page##*/} lints clean"
  else
    echo "not ok $n - ${page##*/} lints clean"
    printf '%s\n' "$out" | sed 's/^/#   /'
    failed=$((failed + 1))
  fi
done
echo "1..$n"
[ "$failed" -eq 0 ]
