libsandbox_a_SOURCES += \
	src/sandbox/code.c src/sandbox/code.h
