# The seccomp profile test, and the static probe the integration tests run
# inside containers.
check_PROGRAMS += tests/unit/test-seccomp tests/helpers/probe
TESTS += tests/unit/test-seccomp

tests_unit_test_seccomp_SOURCES = tests/unit/test-seccomp.c tests/helpers/denied-syscalls.h
tests_unit_test_seccomp_LDADD = $(UNIT_LDADD)

# The probe runs in a bare busybox rootfs: static, and without the
# sanitizers, whose runtimes would not load there.  Per-target flags
# replace AM_CFLAGS and AM_LDFLAGS, which carry $(SAN_CFLAGS).
tests_helpers_probe_SOURCES = tests/helpers/probe.c tests/helpers/denied-syscalls.h
tests_helpers_probe_CFLAGS = $(WARN_CFLAGS)
tests_helpers_probe_LDFLAGS = -static
