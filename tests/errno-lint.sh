#!/bin/sh
# No message formats an errno that the failed call did not set.  Library
# calls that report failure their own way leave errno as an earlier call
# left it: libarchive (archive_errno is often its own classification,
# whose strerror misleads: go through layer.c's archive_failed), pthread_*
# (they return the error), cJSON, getaddrinfo (gai_strerror), SQLite and
# libcurl.  Flags errno given to a message within the three lines after
# a call of theirs that can fail, and archive_errno given to sr_error_set
# directly.
n=0 failed=0
lint () {
  # lint NAME AWK-PROGRAM
  n=$((n + 1))
  out=$(find "$SR_SRCDIR/src" -name '*.c' | sort | xargs awk "$2")
  if [ -z "$out" ]; then
    echo "ok $n - $1"
  else
    echo "not ok $n - $1"
    printf '%s\n' "$out" | sed "s|$SR_SRCDIR/||; s/^/#   /"
    failed=$((failed + 1))
  fi
}

lint "errno is not read after a call that does not set it" '
  FNR == 1 { since = 99 }
  /(archive_read_[a-z_]*|archive_write_[a-z_]*|pthread_[a-z_]*|cJSON_Parse[A-Za-z]*|sqlite3_[a-z_0-9]*|curl_(easy|multi)_[a-z_]*|getaddrinfo) *\(/ {
    since = 0; call = $0
  }
  /(sr_error_set[a-z_]*|sr_files_fail_errno|die|write_failed) *\(([^()]*, *)?errno *[,)]|strerror *\( *errno *\)/ {
    if (since <= 3)
      printf "%s:%d: errno after %s\n", FILENAME, FNR, call
  }
  { since++ }'

lint "archive_errno goes through archive_failed" '
  /sr_error_set[a-z_]* *\([^()]*archive_errno/ { printf "%s:%d: %s\n", FILENAME, FNR, $0 }'

echo "1..$n"
[ "$failed" -eq 0 ]
