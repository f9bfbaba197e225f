#!/bin/sh
# mcp-machines.sh with the session on the Docker backend: a Docker
# container and an SSH host as two machines of one server.
SR_MACHINES_BACKEND=docker
export SR_MACHINES_BACKEND
. "${SR_SRCDIR}/tests/integration/mcp-machines.sh"
