libsandbox_a_SOURCES += src/store/history.c src/store/history.h
