#!/bin/sh
# The layers of src/ hold (doc/ARCHITECTURE.md):
#
#   common/                       includes only common/
#   runtime/ image/ docker/ store/  only themselves and common/
#   sandbox/                      any of those and itself
#   mcp/                          sandbox/, common/ and itself
#   cli/                          sandbox/, common/, mcp/ and itself
#
# plus the exceptions doc/ARCHITECTURE.md lists (its indented lines
# "src/FILE -> AREA/HEADER.h" and "cycle src/A.c src/B.c"), and no two .c
# files depend on each other through their headers.  A module is a .c
# file with its header (foo.c, foo.h, foo-internal.h); a header without a
# .c of its own passes its includes on to whoever includes it.
srcdir=${SR_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$srcdir" || exit 1
doc=doc/ARCHITECTURE.md

[ -r "$doc" ] || { echo "Bail out! $doc is missing"; exit 1; }
files=$(find src -name '*.[ch]' | LC_ALL=C sort)
[ -n "$files" ] || { echo "Bail out! no sources under src/"; exit 1; }

# One line per include: FILE HEADER (quoted includes of src/ only).
edges=$(for f in $files; do
  sed -n 's|^[ \t]*#[ \t]*include[ \t]*"\([a-z]*/[^"]*\)".*|\1|p' "$f" | sed "s|^|$f |"
done)

echo "1..2"

awk -v doc="$doc" '
  BEGIN {
    allow["common"] = " common "
    allow["runtime"] = " common runtime "
    allow["image"] = " common image "
    allow["docker"] = " common docker "
    allow["store"] = " common store "
    allow["sandbox"] = " common runtime image docker store sandbox "
    allow["mcp"] = " common sandbox mcp "
    allow["cli"] = " common sandbox mcp cli "
    while ((getline line < doc) > 0)
      if (line ~ /^    src\/[^ ]+ -> [a-z]+\/[^ ]+/)
        {
          split (line, w, " ")
          exception[w[1] " " w[3]] = 1
        }
  }
  {
    split ($1, p, "/")
    split ($2, q, "/")
    if (!(p[2] in allow))
      next
    if (index (allow[p[2]], " " q[1] " ") || (($1 " " $2) in exception))
      next
    print "# " $1 " includes " $2 ": " p[2] "/ may include only" allow[p[2]]
    bad++
  }
  END { exit bad > 0 }
' <<EOF2
$edges
EOF2
if [ $? -eq 0 ]; then
  echo "ok 1 - no include from a lower layer to a higher one, nor across peers"
else
  echo "not ok 1 - no include from a lower layer to a higher one, nor across peers"
fi

awk -v doc="$doc" -v files="$files" '
  # The module of a file: src/mcp/tools-internal.h -> src/mcp/tools, when
  # src/mcp/tools.c exists; "" for a header of no .c.
  function module_of (f,    m) {
    m = f
    sub (/\.[ch]$/, "", m)
    if ((m ".c") in is_file)
      return m
    sub (/-internal$/, "", m)
    if ((m ".c") in is_file)
      return m
    return ""
  }
  # Adds the modules f reaches to deps[from], through headers of no .c.
  function reach (from, f,    i, n, h, m) {
    if ((from SUBSEP f) in seen)
      return
    seen[from, f] = 1
    n = n_inc[f]
    for (i = 1; i <= n; i++)
      {
        h = inc[f, i]
        m = module_of (h)
        if (m == "")
          reach (from, h)
        else if (m != from)
          dep[from, m] = 1
      }
  }
  BEGIN {
    n = split (files, list, "\n")
    for (i = 1; i <= n; i++)
      is_file[list[i]] = 1
    while ((getline line < doc) > 0)
      if (line ~ /^    cycle src\/[^ ]+\.c src\/[^ ]+\.c/)
        {
          split (line, w, " ")
          a = w[2]; b = w[3]
          sub (/\.c$/, "", a); sub (/\.c$/, "", b)
          allowed[a, b] = allowed[b, a] = 1
        }
  }
  { h = "src/" $2; inc[$1, ++n_inc[$1]] = h }
  END {
    for (i = 1; i <= n; i++)
      {
        m = module_of (list[i])
        if (m != "")
          {
            mods[m] = 1
            reach (m, list[i])
          }
      }
    # Transitive closure over the modules (a hundred or so).
    for (k in mods)
      for (a in mods)
        if ((a, k) in dep)
          for (b in mods)
            if ((k, b) in dep && a != b)
              dep[a, b] = 1
    for (a in mods)
      for (b in mods)
        if (a < b && (a, b) in dep && (b, a) in dep && !((a, b) in allowed))
          {
            print "# " a ".c and " b ".c depend on each other"
            bad++
          }
    exit bad > 0
  }
' <<EOF2
$edges
EOF2
if [ $? -eq 0 ]; then
  echo "ok 2 - no include cycle between .c files"
else
  echo "not ok 2 - no include cycle between .c files"
fi
