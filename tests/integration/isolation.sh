#!/bin/sh
# What the command sees from inside its container.
. "${SR_SRCDIR}/tests/integration/lib.sh"
require_busybox_rootfs

run_in sh -c 'echo $$; cat /proc/1/comm; grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/1/status | tr -s "\t" " "'
is "$(echo "$out" | sed -n 1p)" 2 "the command is pid 2 of its own pid namespace"
is "$(echo "$out" | sed -n 2p)" sandbox-runner "an init of ours is pid 1"
is "$(echo "$out" | sed -n '3,5p' | tr '\n' ' ')" "CapEff: 0000000000000000 NoNewPrivs: 1 Seccomp: 2 " \
  "the init runs under the command's policy"
is "$rc" 0 "and exits 0"

# The init dropped its privileges only after the command's execve: a
# command that read /proc/1 at once saw it with every capability about one
# run in seven.  Twenty runs of the quickest reader catch that window.
unprivileged_init=0
for i in $(seq 20); do
  run_in grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/1/status
  [ "$(echo "$out" | tr -d ' \t\n')" = "CapEff:0000000000000000NoNewPrivs:1Seccomp:2" ] &&
    unprivileged_init=$((unprivileged_init + 1))
done
is "$unprivileged_init" 20 "the init has the command's policy from the command's first instruction"

run_in sh -c 'ls /proc/1/fd 2>&1; cat /proc/1/environ 2>&1; echo; { echo x > /proc/1/mem; } 2>&1; true'
is "$(echo "$out" | grep -c "Permission denied")" 3 \
  "the init's fds, environment and memory are out of the command's reach"
run_in sh -c 'tr -d "\0" < /proc/1/cmdline | wc -c'
is "$out" 0 "and /proc/1/cmdline shows nothing of the runner's command line"

# A plain rootfs that lacks the mount points (/proc, /dev, /tmp, /work):
# its top-level entries go into a read-only tmpfs root of ours with the
# missing ones, as bubblewrap does, and nothing is written to it.
plain=$sr_tmp/plain
mkdir -p "$plain/etc"
cp -a "$ROOTFS/bin" "$plain/"
echo hi > "$plain/hello.txt"
ln -s bin "$plain/sbin"
before=$(ls -lA "$plain")
run_sr run --rootfs "$plain" -- sh -c 'cat /hello.txt; echo x > /work/f && cat /work/f
  echo y > /tmp/g && cat /tmp/g; [ -r /proc/self/status ] && [ -c /dev/null ] && echo kernel
  ls /sbin/sh; touch /new /bin/new 2>&1; true'
is "$rc" 0 "a rootfs without /proc, /dev, /tmp and /work runs"
is "$out" "hi
x
y
kernel
/sbin/sh
touch: /new: Read-only file system
touch: /bin/new: Read-only file system" \
  "with its files, symlinks and the mount points, all read-only but the writable ones"
is "$(ls -lA "$plain")" "$before" "and nothing is written to the rootfs"

run_in hostname
is "$out" sandbox "the hostname is sandbox"

run_in ls /sys/class/net
is "$out" lo "lo is the only network interface"
run_in cat /sys/class/net/lo/flags
is "$out" 0x9 "and it is up (IFF_UP | IFF_LOOPBACK)"

run_in cat /proc/self/uid_map
map=$(echo "$out" | tr -s ' ' | sed 's/^ //')
if [ "$(id -u)" -eq 0 ]; then
  # One slot of 65536 ids from 0x70000000 on (the range runtime/idmap.h
  # leases to one container at a time).
  base=$(echo "$map" | sed -n 's/^0 \([0-9]*\) 65536$/\1/p')
  ok "$([ -n "$base" ] && [ "$base" -ge 1879048192 ] && [ "$base" -lt 2147483648 ] &&
        [ $(((base - 1879048192) % 65536)) -eq 0 ]; echo $?)" \
    "as root, root inside maps to a slot of an unprivileged range"
else
  like "$map" "^0 $(id -u) 1$|^0 $(id -u) 1\$|^0 $(id -u) 1 ?" "rootless, root inside is the caller"
fi
run_in cat /proc/self/gid_map
gmap=$(echo "$out" | tr -s ' ' | sed 's/^ //')
case $gmap in
  "0 0 "*) ok 1 "host gid 0 is never mapped"; echo "# $gmap" ;;
  *) ok 0 "host gid 0 is never mapped" ;;
esac

marker=$sr_tmp/host-only-$$
touch "$marker"
run_in sh -c "ls -d '$marker' '$SR_BUILDDIR' 2>&1; ls /"
case $out in
  *"$marker"*No*such*) ok 0 "host files are invisible" ;;
  *) ok 1 "host files are invisible"; echo "# $out" ;;
esac
is "$(echo "$out" | tail -n +3 | tr '\n' ' ')" "$(ls "$ROOTFS" | tr '\n' ' ')" "/ holds only the rootfs"

run_in sh -c 'touch /bin/x 2>&1; echo rc=$?'
like "$out" "Read-only file system" "the root is read-only"
like "$out" "rc=1" "writing to it fails"

run_in sh -c 'echo data > /tmp/f && cat /tmp/f && cp /bin/busybox /tmp/bb && /tmp/bb true; echo rc=$?'
like "$out" "^data" "/tmp is writable"
like "$out" "rc=126" "/tmp is noexec"
run_in sh -c 'grep " /tmp " /proc/mounts'
like "$out" "tmpfs /tmp tmpfs rw,nosuid,nodev,noexec.*size=65536k" "/tmp is a 64 MiB nosuid,nodev,noexec tmpfs"

run_in sh -c 'echo x > /work/f && cat /work/f && pwd'
is "$out" "x
/work" "the scratch dir /work is writable and the working directory"

run_in sh -c 'wc -c < /proc/keys; wc -c < /proc/timer_list; ls /sys/firmware | wc -l'
is "$(echo $out)" "0 0 0" "masked paths read as empty"
run_in sh -c '{ echo 1 > /proc/sys/kernel/ns_last_pid; } 2>&1; { echo 1 > /proc/sysrq-trigger; } 2>&1; echo rc=$?'
like "$out" "Read-only file system" "/proc/sys is read-only"
like "$out" "rc=1" "/proc/sysrq-trigger is read-only"

run_in sh -c 'grep -E "^(NoNewPrivs|CapEff|CapBnd|CapPrm|CapAmb)" /proc/self/status | tr -s "\t" " "'
is "$(echo $out)" "CapPrm: 0000000000000000 CapEff: 0000000000000000 CapBnd: 0000000000000000 CapAmb: 0000000000000000 NoNewPrivs: 1" "no capabilities and no_new_privs"

run_in sh -c 'cat /dev/tty 2>&1; echo rc=$?'
like "$out" "No such device or address|rc=1" "no controlling terminal"
run_in sh -c 'ps -o sid,pid | tail -n +2 | head -1'
is "$(echo $out)" "1 1" "the command leads its own session"

SR_SECRET=leak run_sr run --rootfs "$ROOTFS" -- env
is "$(echo "$out" | sort | tr '\n' ' ')" "HOME=/work LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/opt/conda/bin " "the environment is clean"
run_sr run --rootfs "$ROOTFS" --env FOO=bar --env PATH=/bin -- env
is "$(echo "$out" | sort | tr '\n' ' ')" "FOO=bar HOME=/work LANG=C.UTF-8 PATH=/bin " "--env adds and overrides"

run_in sh -c 'ls /proc/self/fd | tr "\n" " "'
is "$out" "0 1 2 3 " "only fds 0-2 are open (3 is ls's own directory)"

run_in sh -c 'ls /dev | tr "\n" " "'
is "$out" "fd full null ptmx pts random shm stderr stdin stdout tty urandom zero " "a minimal /dev"
run_in sh -c 'head -c 4 /dev/zero | wc -c; echo x > /dev/null; echo rc=$?; test -c /dev/pts/ptmx && echo pts'
is "$(echo $out)" "4 rc=0 pts" "the devices work and devpts is a new instance"

run_in sh -c 'ip -o link 2>/dev/null | wc -l; ping -c1 -W1 1.1.1.1 >/dev/null 2>&1; echo ping=$?'
like "$out" "ping=[12]" "no route out of the network namespace"

echo hello-stdin > "$sr_tmp/in"
"$SR_BIN" run --rootfs "$ROOTFS" -- cat < "$sr_tmp/in" > "$sr_tmp/out2" 2>&1
is "$(cat "$sr_tmp/out2")" "hello-stdin" "stdin from a file reaches the command"

mkdir -p "$sr_tmp/share"
echo shared > "$sr_tmp/share/file"
chmod -R a+rX "$sr_tmp/share"
run_sr run --rootfs "$ROOTFS" --bind "$sr_tmp/share:/mnt/data:ro" -- sh -c 'cat /mnt/data/file; { echo y > /mnt/data/new; } 2>&1; echo rc=$?'
like "$out" "^shared" "--bind makes a host dir visible"
like "$out" "Read-only file system" ":ro binds read-only"

run_sr run --rootfs "$ROOTFS" --workdir /tmp -- pwd
is "$out" /tmp "--workdir sets the working directory"

done_testing
