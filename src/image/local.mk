libsandbox_a_SOURCES += \
	src/image/digest.c src/image/digest.h \
	src/image/oci.c src/image/oci.h \
	src/image/layer.c src/image/layer.h \
	src/image/layer-modes.c \
	src/image/store.c src/image/store.h src/image/store-internal.h \
	src/image/store-install.c \
	src/image/import.c src/image/import.h \
	src/image/reference.c src/image/reference.h \
	src/image/registry.c src/image/registry.h src/image/registry-internal.h \
	src/image/registry-http.c src/image/registry-auth.c
