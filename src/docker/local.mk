# The Docker Engine API client of the optional Docker backend (libcurl,
# cJSON: both already linked for registry pulls).
libsandbox_a_SOURCES += \
	src/docker/engine.c src/docker/engine.h
