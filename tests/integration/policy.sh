#!/bin/sh
# The policy the command runs under, seen from inside by the static probe:
# the default seccomp profile, capabilities, foreign ABIs, the terminal and
# the network.
. "${SR_SRCDIR}/tests/integration/lib.sh"
require_busybox_rootfs
[ -x "$ROOTFS/bin/probe" ] || skip_all "tests/helpers/probe was not built"

header=$SR_SRCDIR/tests/helpers/denied-syscalls.h

run_in probe syscalls
is "$rc" 0 "the probe ran every dangerous syscall"
is "$(printf '%s\n' "$out" | wc -l)" "$(grep -c '^  { "' "$header")" \
  "one answer for each call in the list"
wrong=$(printf '%s\n' "$out" | grep -v -e ' errno=EPERM$' -e '^clone3 errno=ENOSYS$')
is "$wrong" "" "each is denied with EPERM, clone3 with ENOSYS so that libc falls back to clone"

run_in probe status
like "$out" "Seccomp: 2" "a seccomp filter is loaded"
like "$out" "NoNewPrivs: 1" "no_new_privs is set"
for set in CapInh CapPrm CapEff CapBnd CapAmb; do
  like "$out" "$set: 0000000000000000" "$set is empty"
done

run_in probe tiocsti
is "$(printf '%s\n' "$out" | grep -c 'fd=. errno=EPERM')" 3 \
  "TIOCSTI cannot push input into any of fds 0-2"
like "$out" "tiocsti open-/dev/tty errno=ENXIO" "and there is no terminal to open"

if [ "$(uname -m)" = x86_64 ]; then
  run_in probe x32
  is "$out" "x32 killed SIGSYS" "an x32 syscall kills the process"
  run_in probe i386
  is "$out" "i386 killed SIGSYS" "an i386 syscall (int 0x80) kills the process"
else
  skip "x32 and i386 ABIs exist only on x86_64"
  skip "x32 and i386 ABIs exist only on x86_64"
fi

run_in probe listen-connect
like "$out" "^loopback ok" "loopback works inside"
like "$out" "connect 10.0.2.2:80 errno=ENETUNREACH" "a private address is unreachable"
like "$out" "connect 1.1.1.1:53 errno=ENETUNREACH" "a public address is unreachable"

# --seccomp unconfined drops the filter and nothing else.
run_sr run --seccomp unconfined --rootfs "$ROOTFS" -- probe status
like "$out" "Seccomp: 0" "--seccomp unconfined loads no filter"
like "$out" "CapBnd: 0000000000000000" "but the capabilities stay dropped"

# A profile of the user's own, in the OCI format.
cat > "$sr_tmp/deny-mkdir.json" <<'JSON'
{
  "defaultAction": "SCMP_ACT_ALLOW",
  "syscalls": [
    { "names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13 }
  ]
}
JSON
run_sr run --seccomp "$sr_tmp/deny-mkdir.json" --rootfs "$ROOTFS" -- mkdir /tmp/d
is "$rc" 1 "a custom profile applies"
like "$err" "Permission denied" "with the errno it names"

printf '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["no_such_call"], "action": "SCMP_ACT_ERRNO"}]}' \
  > "$sr_tmp/bad.json"
run_sr run --seccomp "$sr_tmp/bad.json" --rootfs "$ROOTFS" -- true
is "$rc" 125 "a profile naming an unknown syscall is refused"
like "$err" "syscalls\[0\]\.names\[0\]: unknown syscall 'no_such_call'" "with the JSON path of the problem"

printf '{"defaultAction": ' > "$sr_tmp/truncated.json"
run_sr run --seccomp "$sr_tmp/truncated.json" --rootfs "$ROOTFS" -- true
is "$rc" 125 "a profile that is not JSON is refused"
like "$err" "not valid JSON" "and the error says so"

run_sr run --seccomp "$sr_tmp/missing.json" --rootfs "$ROOTFS" -- true
is "$rc" 125 "a missing profile is refused"
like "$err" "missing.json.*No such file" "naming the file"

# The compiled default filter is cached for the next runner, privately,
# and a damaged cache file is recompiled rather than trusted.
rt=$sr_tmp/runtime
SANDBOX_RUNTIME_DIR=$rt run_in true
cached=$(ls "$rt"/seccomp/*.bpf 2>/dev/null | head -1)
ok $([ -n "$cached" ] && echo 0 || echo 1) "the compiled default filter is cached"
is "$(stat -c %a "$rt/seccomp")" 700 "in a directory only its user can enter"
head -c 40 "$cached" > "$cached.short" && mv "$cached.short" "$cached"
SANDBOX_RUNTIME_DIR=$rt run_in probe syscalls
wrong=$(printf '%s\n' "$out" | grep -v -e ' errno=EPERM$' -e '^clone3 errno=ENOSYS$')
is "$wrong" "" "a truncated cache file is ignored: every call is still denied"
ok $([ "$(stat -c %s "$cached")" -gt 40 ] && echo 0 || echo 1) "and the cache is rewritten"

done_testing
