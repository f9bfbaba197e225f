libsandbox_a_SOURCES += \
	src/mcp/jsonrpc.c src/mcp/jsonrpc.h \
	src/mcp/server.c src/mcp/server.h \
	src/mcp/tools.c src/mcp/tools.h src/mcp/tools-internal.h \
	src/mcp/session-tools.c src/mcp/session-tools.h \
	src/mcp/stdio.c src/mcp/stdio.h \
	src/mcp/http.c src/mcp/http.h src/mcp/http-internal.h \
	src/mcp/http-check.c src/mcp/http-session.c src/mcp/http-stream.c \
	src/mcp/http-endpoint.c src/mcp/http-files.c
