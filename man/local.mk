dist_man_MANS += man/sandbox-runner.1 man/sandbox-runner.conf.5 man/sandbox-runner-mcp.7

# The page must lint clean: a warning is a test failure.
TESTS += tests/man-lint.sh
EXTRA_DIST += tests/man-lint.sh
