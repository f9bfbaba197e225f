# The Docker Engine API client of the optional Docker backend (libcurl,
# cJSON: both already linked for registry pulls).
libsandbox_a_SOURCES += \
	src/docker/engine.c src/docker/engine.h src/docker/engine-internal.h \
	src/docker/http.c \
	src/docker/container-json.c \
	src/docker/container.c \
	src/docker/stream.c \
	src/docker/supervise.c \
	src/docker/exec.c \
	src/docker/hijack.c
