sandbox_runner_SOURCES += \
	src/cli/main.c src/cli/commands.h \
	src/cli/run.c \
	src/cli/config_cmd.c \
	src/cli/ps.c \
	src/cli/image.c src/cli/image_pull.c \
	src/cli/run_code.c \
	src/cli/history.c \
	src/cli/result_json.c src/cli/result_json.h
