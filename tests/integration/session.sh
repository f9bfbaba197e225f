#!/bin/sh
# A held container keeps its namespaces and files across commands; each
# command runs under the same policy and its leftovers die with it.
. "${SR_SRCDIR}/tests/integration/lib.sh"
require_busybox_rootfs
driver=$SR_BUILDDIR/tests/helpers/session-driver

ROOTFS=$ROOTFS "$driver" \
  'echo persisted > /work/f; echo written' \
  'cat /work/f' \
  'echo $$; hostname' \
  'ps -o pid | tail -n +2 | wc -l; ls /sys/class/net' \
  'grep -E "^(NoNewPrivs|CapEff)" /proc/self/status | tr -s "\t" " " | tr "\n" " "' \
  'exit 7' \
  'timeout:sleep 30 & sleep 30' \
  'ps -o args | grep -c "^sleep 30"; true' \
  'touch /bin/x 2>&1' \
  'grep -c ":/exec-" /proc/self/cgroup; true' \
  'timeout:setsid sleep 31 & sleep 30' \
  'ps -o args | grep -c "^sleep 31"; true' \
  'setsid sleep 32 & echo started' \
  'ps -o args | grep -c "^sleep 32"; true' \
  'grep -E "^(CapEff|NoNewPrivs)" /proc/1/status | tr -s "\t" " " | tr "\n" " "' \
  'cat /proc/1/environ >/dev/null 2>&1 && echo readable || echo closed' \
  > "$sr_tmp/session.out" 2>&1
rc=$?
is "$rc" 0 "the driver ran every command"
line () { sed -n "$(( $1 + 1 ))p" "$sr_tmp/session.out"; }
like "$(line 0)" "^init [0-9]+$" "the session has a holding init"
is "$(line 1)" "success 0 written|" "a first command writes a file"
is "$(line 2)" "success 0 persisted|" "the next command sees it"
like "$(line 3)" "^success 0 [0-9]+\|sandbox\|$" "commands share the hostname"
pid=$(line 3 | cut -d' ' -f3 | cut -d'|' -f1)
ok $([ "${pid:-1}" -gt 1 ] && echo 0 || echo 1) "a command is not pid 1 ($pid): the init holds the namespace"
like "$(line 4)" "^success 0 [3-6]\|lo\|$" "only the init and the command's own processes are visible, and only lo"
is "$(line 5)" "success 0 CapEff: 0000000000000000 NoNewPrivs: 1 " "each command gets the policy"
is "$(line 6)" "error 7 " "exit codes come back"
is "$(line 7)" "timeout 137 " "a command's timeout kills it"
is "$(line 8)" "success 0 0|" "and its background job, while the session lives on"
like "$(line 9)" "Read-only file system" "the root stays read-only"
is "$(line 15)" "success 0 CapEff: 0000000000000000 NoNewPrivs: 1 " \
  "the holding init keeps no capability and has no_new_privs"
is "$(line 16)" "success 0 closed|" "and its memory is closed to the commands"
like "$(line 17)" "^pids " "the driver says what limited the pids"
case $(line 17) in
  "pids cgroup"*) has_cgroup=yes ;;
  *) has_cgroup=no ;;
esac
if [ "$has_cgroup" = no ]; then
  for t in "each command runs in a cgroup of its own" \
    "a command's timeout kills what it started in a session of its own" \
    "and so does its end"; do
    skip "$t: the session has no cgroup here ($(line 17)), so a command's processes are killed by process group only"
  done
else
  like "$(line 10)" "^success 0 [1-9]\|" "each command runs in a cgroup of its own"
  is "$(line 12)" "success 0 0|" "a command's timeout kills what it started in a session of its own"
  is "$(line 14)" "success 0 0|" "and so does its end"
fi
init=$(line 0 | cut -d' ' -f2)
init_gone () { [ ! -e "/proc/$init" ]; }
wait_until 10 init_gone
ok $? "destroying the session leaves no init behind"
done_testing
