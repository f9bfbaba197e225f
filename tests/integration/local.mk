integration_tests = \
	tests/integration/isolation.sh \
	tests/integration/supervision.sh

TESTS += $(integration_tests)
EXTRA_DIST += $(integration_tests) tests/integration/lib.sh
