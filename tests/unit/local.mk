unit_tests = \
	tests/unit/test-error \
	tests/unit/test-utf8 \
	tests/unit/test-parse \
	tests/unit/test-mounts \
	tests/unit/test-idmap \
	tests/unit/test-sync \
	tests/unit/test-pack \
	tests/unit/test-config \
	tests/unit/test-image-user \
	tests/unit/test-image \
	tests/unit/test-layer-link \
	tests/unit/test-registry \
	tests/unit/test-history \
	tests/unit/test-history-uri \
	tests/unit/test-files \
	tests/unit/test-policy \
	tests/unit/test-backend \
	tests/unit/test-code-inputs \
	tests/unit/test-compile-cache \
	tests/unit/test-state-workdir \
	tests/unit/test-state-full \
	tests/unit/test-state-rewrite \
	tests/unit/test-tool-args \
	tests/unit/test-resource-uri \
	tests/unit/test-capture \
	tests/unit/test-jsonrpc \
	tests/unit/test-rpc-id \
	tests/unit/test-download-link \
	tests/unit/test-tasks \
	tests/unit/test-task-stdin \
	tests/unit/test-shell-input \
	tests/unit/test-state-reclaim

check_PROGRAMS += $(unit_tests)
TESTS += $(unit_tests)

tests_unit_test_error_LDADD = $(UNIT_LDADD)
tests_unit_test_utf8_LDADD = $(UNIT_LDADD)
tests_unit_test_jsonrpc_LDADD = $(UNIT_LDADD)
tests_unit_test_parse_LDADD = $(UNIT_LDADD)
tests_unit_test_mounts_LDADD = $(UNIT_LDADD)
tests_unit_test_idmap_LDADD = $(UNIT_LDADD)
tests_unit_test_sync_LDADD = $(UNIT_LDADD)
tests_unit_test_pack_LDADD = $(UNIT_LDADD)
tests_unit_test_config_LDADD = $(UNIT_LDADD)
tests_unit_test_image_user_LDADD = $(UNIT_LDADD)
tests_unit_test_image_LDADD = $(UNIT_LDADD)
tests_unit_test_layer_link_LDADD = $(UNIT_LDADD)
tests_unit_test_registry_LDADD = $(UNIT_LDADD)
tests_unit_test_history_LDADD = $(UNIT_LDADD)
tests_unit_test_history_uri_LDADD = $(UNIT_LDADD)
tests_unit_test_files_LDADD = $(UNIT_LDADD)
tests_unit_test_policy_LDADD = $(UNIT_LDADD)
tests_unit_test_backend_LDADD = $(UNIT_LDADD)
tests_unit_test_code_inputs_LDADD = $(UNIT_LDADD)
tests_unit_test_compile_cache_LDADD = $(UNIT_LDADD)
tests_unit_test_state_workdir_LDADD = $(UNIT_LDADD)
tests_unit_test_state_full_LDADD = $(UNIT_LDADD)
tests_unit_test_state_rewrite_LDADD = $(UNIT_LDADD)
tests_unit_test_tool_args_LDADD = $(UNIT_LDADD)
tests_unit_test_resource_uri_LDADD = $(UNIT_LDADD)
tests_unit_test_capture_LDADD = $(UNIT_LDADD)
tests_unit_test_rpc_id_LDADD = $(UNIT_LDADD)
tests_unit_test_download_link_LDADD = $(UNIT_LDADD)
tests_unit_test_tasks_LDADD = $(UNIT_LDADD)
tests_unit_test_task_stdin_LDADD = $(UNIT_LDADD)
tests_unit_test_shell_input_LDADD = $(UNIT_LDADD)
tests_unit_test_state_reclaim_LDADD = $(UNIT_LDADD)
include tests/unit/seccomp.mk

# The test enters sr_workdir_make's window between mkdtemp and flock on
# purpose, through a wrapper of flock.
tests_unit_test_state_workdir_LDFLAGS = $(AM_LDFLAGS) -Wl,--wrap=flock
# It counts the renames of a rewritten entry.
tests_unit_test_state_rewrite_LDFLAGS = $(AM_LDFLAGS) -Wl,--wrap=rename

# The layers of src/ and their written-down exceptions (doc/ARCHITECTURE.md).
TESTS += tests/unit/layering.sh
EXTRA_DIST += tests/unit/layering.sh doc/ARCHITECTURE.md
