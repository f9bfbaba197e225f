libsandbox_a_SOURCES += \
	src/runtime/container.c src/runtime/container.h \
	src/runtime/child.c src/runtime/child.h \
	src/runtime/mounts.c src/runtime/mounts.h \
	src/runtime/idmap.c src/runtime/idmap.h \
	src/runtime/sync.c src/runtime/sync.h \
	src/runtime/supervise.c src/runtime/supervise.h \
	src/runtime/netlink.c src/runtime/netlink.h \
	src/runtime/caps.c src/runtime/caps.h
