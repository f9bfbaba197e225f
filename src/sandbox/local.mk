libsandbox_a_SOURCES += \
	src/sandbox/backend.c src/sandbox/backend.h \
	src/sandbox/native.c \
	src/sandbox/code.c src/sandbox/code.h src/sandbox/code-internal.h \
	src/sandbox/code-dir.c src/sandbox/code-dir.h src/sandbox/code-request.h \
	src/sandbox/compile-cache.c src/sandbox/compile-cache.h \
	src/sandbox/policy.c src/sandbox/policy.h \
	src/sandbox/pool.c src/sandbox/pool.h \
	src/sandbox/prestart.c src/sandbox/prestart.h \
	src/sandbox/session.c src/sandbox/session.h \
	src/sandbox/files-path.c src/sandbox/files-write.c src/sandbox/files-artifacts.c \
	src/sandbox/files-edit.c src/sandbox/files-search.c src/sandbox/files-native.c \
	src/sandbox/files-check.c \
	src/sandbox/files.h src/sandbox/files-internal.h \
	src/sandbox/files-script.c src/sandbox/files-script.h \
	src/sandbox/shell.c src/sandbox/shell.h \
	src/sandbox/ssh.c src/sandbox/ssh-client.c src/sandbox/ssh-client.h \
	src/sandbox/service.c src/sandbox/service.h
# The Docker backend: only sandbox-runner-full registers it
# (cli/main-full.c), so only it links these and libcurl.
libsandbox_a_SOURCES += src/sandbox/docker-run.c src/sandbox/docker-run.h \
	src/sandbox/docker-session.c

# The bootstrap of a pre-started python is assembled into the binary from
# its source (sandbox/prestart.c).
src/sandbox/prestart.$(OBJEXT): $(top_srcdir)/src/sandbox/warm-python.py
AM_CPPFLAGS += -DSR_WARM_PYTHON='"$(abs_top_srcdir)/src/sandbox/warm-python.py"'
EXTRA_DIST += src/sandbox/warm-python.py
