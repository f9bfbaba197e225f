# libFuzzer harnesses: run.sh builds them with clang (skipped without it)
# and fuzzes each for $SR_FUZZ_SECONDS s (default 20; 0: replay the seeds).
TESTS += tests/fuzz/run.sh
EXTRA_DIST += tests/fuzz/run.sh tests/fuzz/fuzz.h tests/fuzz/fake-run.h \
	tests/fuzz/fuzz-jsonrpc.c tests/fuzz/fuzz-server.c tests/fuzz/fuzz-tools.c \
	tests/fuzz/fuzz-seccomp.c tests/fuzz/fuzz-oci.c tests/fuzz/fuzz-layer-path.c \
	tests/fuzz/fuzz-layer-apply.c tests/fuzz/packages.txt tests/fuzz/corpus

clean-local: clean-local-fuzz
clean-local-fuzz:
	-rm -rf tests/fuzz/obj tests/fuzz/bin tests/fuzz/corpus tests/fuzz/crashes \
	  tests/fuzz/libsr-fuzz.a tests/fuzz/build-lib.log \
	  $(patsubst %,tests/fuzz/%.log,jsonrpc server tools seccomp oci layer-path layer-apply)
.PHONY: clean-local-fuzz
