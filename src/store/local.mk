libsandbox_a_SOURCES += src/store/history.c src/store/history.h \
	src/store/history-backend.h \
	src/store/history-sqlite.c src/store/history-pg.c
