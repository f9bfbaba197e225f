libsandbox_a_SOURCES += src/runtime/seccomp.c src/runtime/seccomp.h
dist_pkgdata_DATA += seccomp/default.json
