# Sourced after lib.sh by the tests of SSH machines: a real OpenSSH
# server of our own on a loopback port (Debian's openssh-server), with a
# host key and a user key made here, which stops with the test (and in
# any case after five minutes).  Skips the test when it cannot run.
# Sets d (its directory: host_key, user_key, known_hosts,
# wrong_known_hosts, empty_known_hosts, sshd.log), port and sshd_pid.
sshd=/usr/sbin/sshd

[ -x "$sshd" ] || skip_all "no $sshd (Debian's openssh-server, tests/integration/packages.txt)"
command -v ssh >/dev/null && command -v ssh-keygen >/dev/null ||
  skip_all "no OpenSSH client (ssh, ssh-keygen)"
[ "$(id -u)" -eq 0 ] || skip_all "sshd needs root here, to let the test log in by key"
command -v python3 >/dev/null || skip_all "python3 is needed to find a free port"

d=$sr_tmp/ssh
mkdir -p "$d/run" /run/sshd
chmod 700 "$d/run"
ssh-keygen -q -t ed25519 -N '' -C test-host -f "$d/host_key"
ssh-keygen -q -t ed25519 -N '' -C other-host -f "$d/other_key"
ssh-keygen -q -t ed25519 -N '' -C test-user -f "$d/user_key"
cp "$d/user_key.pub" "$d/authorized_keys"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$d/host_key.pub")" > "$d/known_hosts"
echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$d/other_key.pub")" > "$d/wrong_known_hosts"
: > "$d/empty_known_hosts"
cat > "$d/sshd_config" <<EOC
ListenAddress 127.0.0.1:$port
HostKey $d/host_key
AuthorizedKeysFile $d/authorized_keys
PidFile none
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
StrictModes no
LogLevel VERBOSE
EOC
timeout 300 "$sshd" -D -e -f "$d/sshd_config" 2>"$d/sshd.log" &
sshd_pid=$!
at_exit "kill $sshd_pid 2>/dev/null; wait $sshd_pid 2>/dev/null"
up=1
for _ in $(seq 50); do
  if python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null; then
    up=0; break
  fi
  sleep 0.1
done
[ "$up" -eq 0 ] || skip_all "sshd did not start: $(tail -n 3 "$d/sshd.log" | tr '\n' ' ')"

# ssh.NAME entries of a configuration for this sshd: ssh_target NAME
# KNOWN_HOSTS.
ssh_target () {
  printf 'ssh.%s.host = 127.0.0.1\nssh.%s.port = %s\nssh.%s.user = root\n' "$1" "$1" "$port" "$1"
  printf 'ssh.%s.identity_file = %s\nssh.%s.known_hosts = %s\n' "$1" "$d/user_key" "$1" "$2"
}
