# Tests speak TAP: C unit tests link libsandbox.a, integration tests are
# shell scripts that drive the real binary.  Each area appends to the lists.
LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
TEST_EXTENSIONS = .sh
SH_LOG_DRIVER = $(LOG_DRIVER)
AM_TESTS_ENVIRONMENT = \
	SR_BIN='$(abs_top_builddir)/sandbox-runner'; export SR_BIN; \
	SR_BUILDDIR='$(abs_top_builddir)'; export SR_BUILDDIR; \
	SR_SRCDIR='$(abs_top_srcdir)'; export SR_SRCDIR; \
	BUSYBOX='$(BUSYBOX)'; export BUSYBOX;

UNIT_LDADD = $(SR_LIBS)

EXTRA_DIST += tests/unit/tap.h

# No message formats an errno the failed call did not set.
TESTS += tests/errno-lint.sh
EXTRA_DIST += tests/errno-lint.sh

include tests/unit/local.mk
include tests/integration/local.mk
include tests/fuzz/local.mk
