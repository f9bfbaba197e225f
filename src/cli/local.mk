# sandbox-runner: everything a run needs and nothing more; the commands
# that need the heavy libraries are in sandbox-runner-full (delegate.c).
cli_sources = \
	src/cli/main.c src/cli/commands.h \
	src/cli/input.c \
	src/cli/run.c \
	src/cli/config_cmd.c \
	src/cli/ps.c \
	src/cli/image.c \
	src/cli/run_code.c \
	src/cli/history.c \
	src/cli/audit.c \
	src/cli/doctor.c \
	src/cli/serve.c \
	src/cli/result_json.c src/cli/result_json.h \
	src/cli/exec_helper.c

sandbox_runner_SOURCES += $(cli_sources) src/cli/main-light.c src/cli/delegate.c

# sandbox-runner-http: `serve --transport http` on the native backend,
# with libmicrohttpd and none of libcurl and libarchive (whose
# dependencies would double a server's memory).
pkglibexec_PROGRAMS = sandbox-runner-http sandbox-runner-full
sandbox_runner_http_SOURCES = $(cli_sources) src/cli/main-http.c src/cli/delegate.c \
	src/cli/serve_http.c
sandbox_runner_http_LDADD = $(SR_LIBS)

sandbox_runner_full_SOURCES = $(cli_sources) src/cli/main-full.c \
	src/cli/image_import.c src/cli/image_pull.c \
	src/cli/serve_http.c \
	src/cli/session_client.c src/cli/session_client.h \
	src/cli/session_mcp.c \
	src/cli/session_commands.c \
	src/cli/session_shell.c \
	src/cli/session_files.c \
	src/cli/session_download.c
sandbox_runner_full_LDADD = $(SR_LIBS)
