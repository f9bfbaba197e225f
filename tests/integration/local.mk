integration_tests = \
	tests/integration/bench-report.sh \
	tests/integration/cgroup2-vm.sh \
	tests/integration/isolation.sh \
	tests/integration/user-inside.sh \
	tests/integration/shared-mounts.sh \
	tests/integration/tenant-ids.sh \
	tests/integration/supervision.sh \
	tests/integration/limits.sh \
	tests/integration/cgroup1-self-attach.sh \
	tests/integration/policy.sh \
	tests/integration/session.sh \
	tests/integration/operator.sh \
	tests/integration/images.sh \
	tests/integration/run-code.sh \
	tests/integration/compile-cache.sh \
	tests/integration/run-code-ahead.sh \
	tests/integration/run-inputs.sh \
	tests/integration/languages.sh \
	tests/integration/history.sh \
	tests/integration/history-pg.sh \
	tests/integration/image-pull.sh \
	tests/integration/mcp-stdio.sh \
	tests/integration/hostile.sh \
	tests/integration/mcp-http.sh \
	tests/integration/fleet.sh \
	tests/integration/http-header-timeout.sh \
	tests/integration/http-keep-alive.sh \
	tests/integration/http-idle-connections.sh \
	tests/integration/mcp-session.sh \
	tests/integration/spawner.sh \
	tests/integration/session-scratch.sh \
	tests/integration/session-write-killed.sh \
	tests/integration/oneshot-code-dir.sh \
	tests/integration/mcp-resources.sh \
	tests/integration/mcp-aisdk.sh \
	tests/integration/mcp-eras.sh \
	tests/integration/mcp-tasks.sh \
	tests/integration/logging.sh \
	tests/integration/notify.sh \
	tests/integration/mcp-compat.sh \
	tests/integration/mcp-sse.sh \
	tests/integration/mcp-safety.sh \
	tests/integration/mcp-shells.sh \
	tests/integration/mcp-sizes.sh \
	tests/integration/mcp-inputs.sh \
	tests/integration/warm-interp.sh \
	tests/integration/mcp-tenancy.sh \
	tests/integration/mcp-schemas.sh \
	tests/integration/cli-session.sh \
	tests/integration/cli-exit.sh \
	tests/integration/doctor.sh \
	tests/integration/ops-docs.sh \
	tests/integration/config.sh \
	tests/integration/faults.sh \
	tests/integration/statedir.sh \
	tests/integration/image-stores.sh \
	tests/integration/image-layers.sh \
	tests/integration/deb.sh \
	tests/integration/load.sh \
	tests/integration/valgrind.sh

TESTS += $(integration_tests)
EXTRA_DIST += tests/hostile
EXTRA_DIST += $(integration_tests) tests/integration/lib.sh tests/integration/cgroup2.sh \
	tests/integration/history-checks.sh \
	tests/helpers/oci-fixture.py tests/helpers/warm-interp.py tests/integration/packages.txt \
	tests/mcp/http-client.mjs tests/mcp/stdio-client.mjs tests/mcp/session-client.mjs tests/mcp/compat-client.mjs tests/mcp/sse-client.mjs tests/mcp/safety-client.mjs tests/mcp/resources-client.mjs tests/mcp/aisdk-client.mjs tests/mcp/shells-client.mjs tests/mcp/sizes-client.mjs tests/mcp/inputs-client.mjs tests/mcp/languages-client.mjs tests/mcp/tenancy-client.mjs tests/mcp/eras-client.mjs tests/mcp/fleet-client.mjs tests/mcp/keep-alive-client.mjs tests/fleet/haproxy-cfg.sh tests/load/leaks.sh tests/load/load-client.mjs tests/mcp/package.json tests/mcp/package-lock.json

# Test programs that drive the runtime directly.
check_PROGRAMS += tests/helpers/session-driver
tests_helpers_session_driver_LDADD = $(UNIT_LDADD)

# The SSH backend, driven against a real sshd on loopback.
check_PROGRAMS += tests/helpers/ssh-driver
tests_helpers_ssh_driver_LDADD = $(UNIT_LDADD)
TESTS += tests/integration/ssh.sh tests/integration/mcp-machines.sh \
	tests/integration/mcp-machines-docker.sh tests/integration/mcp-tasks-ssh.sh
EXTRA_DIST += tests/integration/ssh.sh tests/integration/sshd.sh \
	tests/integration/mcp-machines.sh tests/integration/mcp-machines-docker.sh \
	tests/integration/mcp-tasks-ssh.sh tests/integration/tasks-lib.sh \
	tests/mcp/machines-client.mjs
# env's Docker lifecycle, on a real dockerd and refused on native.
TESTS += tests/integration/mcp-env-docker.sh
# One at a time (make -j): the SSH tests share the remote side (this
# host's /tmp and home), and every test on Docker the one dockerd, which
# the test that started it stops when it ends.
tests/integration/mcp-machines.log: tests/integration/ssh.log
tests/integration/mcp-tasks-ssh.log: tests/integration/mcp-machines.log
tests/integration/mcp-machines-docker.log: tests/integration/mcp-machines.log \
	tests/integration/docker-reclaim.log
tests/integration/mcp-env-docker.log: tests/integration/mcp-machines-docker.log
EXTRA_DIST += tests/integration/mcp-env-docker.sh tests/mcp/env-docker-client.mjs

# The Docker Engine client, driven against a real dockerd.
check_PROGRAMS += tests/helpers/docker-driver
tests_helpers_docker_driver_LDADD = $(UNIT_LDADD)
TESTS += tests/integration/docker.sh
EXTRA_DIST += tests/integration/docker.sh tests/docker/start-dockerd.sh tests/docker/packages.txt \
	tests/docker/flatten-oci.py
# run-code on the Docker backend agrees with the native one.
TESTS += tests/integration/docker-parity.sh
# Both use the one dockerd, which the first to start it stops when it
# ends: the second must not run meanwhile (make -j).
tests/integration/docker-parity.log: tests/integration/docker.log
EXTRA_DIST += tests/integration/docker-parity.sh tests/docker/session-cases.py
# Runners on Docker remove what killed runners left there.
TESTS += tests/integration/docker-reclaim.sh
tests/integration/docker-reclaim.log: tests/integration/docker-parity.log
EXTRA_DIST += tests/integration/docker-reclaim.sh
