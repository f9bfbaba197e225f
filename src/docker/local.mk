# The Docker Engine API client of the optional Docker backend (libcurl,
# cJSON: both already linked for registry pulls).
libsandbox_a_SOURCES += \
	src/docker/engine.c src/docker/engine.h src/docker/engine-internal.h \
	src/docker/engine-http.c \
	src/docker/engine-container-json.c \
	src/docker/engine-container.c \
	src/docker/engine-stream.c \
	src/docker/engine-supervise.c \
	src/docker/engine-exec.c \
	src/docker/engine-hijack.c \
	src/docker/engine-manage.c
