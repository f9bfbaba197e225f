libsandbox_a_SOURCES += \
	src/runtime/container.c src/runtime/container.h \
	src/runtime/child.c src/runtime/child.h \
	src/runtime/mounts.c src/runtime/mounts.h \
	src/runtime/idmap.c src/runtime/idmap.h \
	src/runtime/sync.c src/runtime/sync.h \
	src/runtime/supervise.c src/runtime/supervise.h \
	src/runtime/netlink.c src/runtime/netlink.h \
	src/runtime/caps.c src/runtime/caps.h \
	src/runtime/cgroup.c src/runtime/cgroup.h \
	src/runtime/charge.c src/runtime/charge.h \
	src/runtime/spawner.c src/runtime/spawner.h \
	src/runtime/state.c src/runtime/state.h

# The default seccomp profile is assembled into the binary from its JSON.
libsandbox_a_SOURCES += src/runtime/seccomp-default.c
src/runtime/seccomp-default.$(OBJEXT): $(top_srcdir)/seccomp/default.json
AM_CPPFLAGS += -DSR_SECCOMP_DEFAULT_JSON='"$(abs_top_srcdir)/seccomp/default.json"'
