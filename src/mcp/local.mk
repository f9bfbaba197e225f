libsandbox_a_SOURCES += \
	src/mcp/jsonrpc.c src/mcp/jsonrpc.h \
	src/mcp/rpc-id.c src/mcp/rpc-id.h \
	src/mcp/server.c src/mcp/server.h src/mcp/server-modern.c src/mcp/server-internal.h \
	src/mcp/download-link.c src/mcp/download-link.h \
	src/mcp/tools.c src/mcp/tools.h src/mcp/tools-internal.h \
	src/mcp/tools-result.c src/mcp/tools-run.c src/mcp/tools-audit.c src/mcp/tools-session.c \
	src/mcp/tools-files.c src/mcp/tools-shell.c src/mcp/tools-compat.c src/mcp/tools-machine.c \
	src/mcp/tool-args.c src/mcp/tool-args.h src/mcp/tool-schema.h \
	src/mcp/resources.c src/mcp/resources.h src/mcp/resource-uri.c src/mcp/resource-uri.h \
	src/mcp/tasks.c src/mcp/tasks.h src/mcp/stdin-pipe.c src/mcp/stdin-pipe.h \
	src/mcp/tools-text.c \
	src/mcp/stdio.c src/mcp/stdio.h \
	src/mcp/http.c src/mcp/http.h src/mcp/http-internal.h \
	src/mcp/http-check.c src/mcp/http-session.c src/mcp/http-stream.c \
	src/mcp/http-endpoint.c src/mcp/http-files.c src/mcp/http-sse.c src/mcp/http-health.c \
	src/mcp/http-deadline.c src/mcp/http-deadline.h \
	src/mcp/http-park.c src/mcp/http-park.h

# What tools/list says of each tool, one file a tool, embedded at build
# time (src/mcp/tool-schema.h).
mcp_schemas = \
	src/mcp/schemas/run_code.json \
	src/mcp/schemas/list_supported_languages.json \
	src/mcp/schemas/get_execution_history.json \
	src/mcp/schemas/audit_query.json \
	src/mcp/schemas/create_session.json \
	src/mcp/schemas/close_session.json \
	src/mcp/schemas/list_sessions.json \
	src/mcp/schemas/upload_file.json \
	src/mcp/schemas/list_artifacts.json \
	src/mcp/schemas/read_artifact.json \
	src/mcp/schemas/shell_new.json \
	src/mcp/schemas/shell_exec.json \
	src/mcp/schemas/shell_read.json \
	src/mcp/schemas/write_stdin.json \
	src/mcp/schemas/shell_list.json \
	src/mcp/schemas/shell_remove.json \
	src/mcp/schemas/file_read.json \
	src/mcp/schemas/file_write.json \
	src/mcp/schemas/file_patch.json \
	src/mcp/schemas/file_search.json \
	src/mcp/schemas/machine_list.json \
	src/mcp/schemas/default_set.json \
	src/mcp/schemas/env.json \
	src/mcp/schemas/sandbox_run_python.json \
	src/mcp/schemas/sandbox_upload_file.json \
	src/mcp/schemas/sandbox_read_artifact.json \
	src/mcp/schemas/sandbox_list_artifacts.json \
	src/mcp/schemas/sandbox_close_session.json
EXTRA_DIST += $(mcp_schemas)
AM_CPPFLAGS += -DSR_MCP_SCHEMA_DIR='"$(abs_top_srcdir)/src/mcp/schemas"'
# tools.c embeds them.
src/mcp/tools.$(OBJEXT): $(mcp_schemas)
