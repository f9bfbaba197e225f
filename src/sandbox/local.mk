libsandbox_a_SOURCES += \
	src/sandbox/code.c src/sandbox/code.h src/sandbox/code-internal.h \
	src/sandbox/policy.c src/sandbox/policy.h \
	src/sandbox/pool.c src/sandbox/pool.h \
	src/sandbox/session.c src/sandbox/session.h \
	src/sandbox/files.h src/sandbox/files-internal.h src/sandbox/files-path.c \
	src/sandbox/files-write.c src/sandbox/files-artifacts.c src/sandbox/files-edit.c \
	src/sandbox/files-search.c \
	src/sandbox/shell.c src/sandbox/shell.h \
	src/sandbox/service.c src/sandbox/service.h
# run_code on Docker: reached through a hook (docker-run.h) that only
# sandbox-runner-full registers, so the light binary never links libcurl.
libsandbox_a_SOURCES += src/sandbox/docker-run.c src/sandbox/docker-run.h \
	src/sandbox/docker-session.c src/sandbox/docker-session.h \
	src/sandbox/session-backend.h
