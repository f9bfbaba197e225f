integration_tests =
TESTS += $(integration_tests)
EXTRA_DIST += $(integration_tests) tests/integration/lib.sh
