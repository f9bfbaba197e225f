libsandbox_a_SOURCES += \
	src/common/error.c src/common/error.h \
	src/common/log.c src/common/log.h \
	src/common/notify.c src/common/notify.h \
	src/common/util.c src/common/util.h \
	src/common/xalloc.c src/common/xalloc.h \
	src/common/utf8.c src/common/utf8.h \
	src/common/stdin-wait.c src/common/stdin-wait.h \
	src/common/sha256.c src/common/sha256.h \
	src/common/config.c src/common/config.h \
	src/common/image-user.c src/common/image-user.h \
	src/common/json.h \
	src/common/curlbuf.c src/common/curlbuf.h \
	src/common/run-result.c src/common/run-result.h \
	src/common/workdir.c src/common/workdir.h \
	src/common/statedir.c src/common/statedir.h \
	src/common/history-db.c src/common/history-db.h \
	src/common/pack.c src/common/pack.h \
	src/common/defaults.h
