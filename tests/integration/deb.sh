#!/bin/bash
# The Debian package (issue 27): debian/ builds a .deb with
# dpkg-buildpackage that lintian passes, that installs into a fresh
# bookworm chroot (mmdebstrap, minbase) with its files where Debian policy
# puts them, whose binary runs there (--version, doctor, a container), and
# that purge removes.
#
# The .deb is built once per source (its key hashes what goes into the
# package) and kept under SR_DEB_CACHE, beside the image cache, so the
# suites of one CI run (root, distcheck, sanitizers) build it once; the
# chroot, once per set of dependencies, as a tarball there too.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root (a chroot to install the package in)"
for tool in dpkg-buildpackage dh fakeroot mmdebstrap unshare; do
  command -v "$tool" >/dev/null || skip_all "$tool is not installed (tools/deps.sh tests)"
done
[ -f "$SR_SRCDIR/debian/control" ] || skip_all "no debian/ in $SR_SRCDIR"
arch=$(dpkg --print-architecture)
cache=${SR_DEB_CACHE:-$(dirname "${SR_IMAGE_CACHE:-/var/cache/sandbox-runner/images}")/deb}
mkdir -p "$cache"

# --- build ---
# What goes into the package, copied out of the source tree (which stays
# untouched; under distcheck it is read-only): dpkg-buildpackage writes
# in the tree and beside it.
pkgsrc=$sr_tmp/build/sandbox-runner
mkdir -p "$pkgsrc/m4"
parts="configure.ac Makefile.am README.md doc src man contrib debian rootfs seccomp tests tools"
# shellcheck disable=SC2086
tar -C "$SR_SRCDIR" --exclude=__pycache__ -cf - $parts .ci bench | tar -C "$pkgsrc" -xf -
chmod -R u+w "$pkgsrc"  # distcheck's source is read-only
# shellcheck disable=SC2086
key=$(cd "$pkgsrc" && find $parts -type f ! -path 'tests/*' -print0 | LC_ALL=C sort -z |
  xargs -0 sha256sum | sha256sum | cut -c1-16)
deb=$cache/sandbox-runner-$key-$arch.deb

# The source package (native), before the binary build writes in the tree.
(cd "$sr_tmp/build" && dpkg-source -b sandbox-runner) >"$sr_tmp/source.log" 2>&1
is $? 0 "dpkg-source builds the source package"
dsc=$(ls "$sr_tmp"/build/sandbox-runner_*.dsc 2>/dev/null)
if [ -f "$deb" ]; then
  echo "# the .deb of this source was built before: $deb"
else
  start=$(date +%s)
  (cd "$pkgsrc" && DEB_BUILD_OPTIONS="parallel=$(nproc) nocheck" \
    dpkg-buildpackage -b -uc -us) >"$sr_tmp/build.log" 2>&1
  rc=$?
  is "$rc" 0 "dpkg-buildpackage builds the package"
  echo "# dpkg-buildpackage took $(($(date +%s) - start)) s"
  built=$(ls "$sr_tmp"/build/sandbox-runner_*_"$arch".deb 2>/dev/null)
  if [ "$rc" -ne 0 ] || [ ! -f "$built" ]; then
    tail -30 "$sr_tmp/build.log" | sed 's/^/# /'
    echo "Bail out! no .deb"
    exit 1
  fi
  # One .deb kept: this source's.
  rm -f "$cache"/sandbox-runner-*.deb
  cp "$built" "$deb.tmp" && mv "$deb.tmp" "$deb"
fi

# --- lintian ---
if command -v lintian >/dev/null; then
  # Every tag that is left is overridden, with its reason, in debian/
  # (debian/source/lintian-overrides, debian/sandbox-runner.lintian-overrides).
  # shellcheck disable=SC2086  # no .dsc: the .deb alone
  run_cmd lintian --fail-on error,warning,info,pedantic --pedantic -I -E $dsc "$deb"
  is "$rc" 0 "lintian passes the source package and the .deb, info and pedantic tags included"
  [ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/# /'
else
  skip "lintian is not installed (tools/deps.sh tests)"
fi

# --- a fresh bookworm chroot ---
# minbase and the package's dependencies, made once: the install below
# then needs no network.
deps=$(dpkg-deb -f "$deb" Depends | sed 's/([^)]*)//g; s/|[^,]*//g; s/ //g')
chroot_tar=$cache/bookworm-minbase-$(printf '%s' "$deps" | sha256sum | cut -c1-16).tar
if [ ! -f "$chroot_tar" ]; then
  start=$(date +%s)
  rm -f "$cache"/bookworm-minbase-*.tar
  if ! mmdebstrap --variant=minbase --format=tar --include="$deps" bookworm "$chroot_tar.tmp" \
      "${SR_DEB_MIRROR:-http://deb.debian.org/debian}" >"$sr_tmp/mmdebstrap.log" 2>&1; then
    rm -f "$chroot_tar.tmp"
    tail -5 "$sr_tmp/mmdebstrap.log" | sed 's/^/# /'
    skip "mmdebstrap could not make a bookworm chroot (network?): no install test"
    done_testing
    exit
  fi
  mv "$chroot_tar.tmp" "$chroot_tar"
  echo "# mmdebstrap took $(($(date +%s) - start)) s"
fi
root=$sr_tmp/chroot
mkdir "$root"
tar -C "$root" -xf "$chroot_tar"
cp "$deb" "$root/tmp/sandbox-runner.deb"
if [ -x "${BUSYBOX:-}" ]; then
  make_busybox_rootfs "$root/srv/rootfs"
fi

# in_chroot CMD...: CMD in the chroot's tree, with /proc, /sys and /dev
# mounted, in a mount namespace of its own (all of it goes when it ends).
# pivot_root, not chroot: the kernel refuses a new user namespace to a
# chrooted process, and the runner makes one for every container.
in_chroot () {
  run_cmd unshare --mount --propagation private sh -c '
    r=$1; shift
    mount --bind "$r" "$r" && mount -t proc proc "$r/proc" && mount --rbind /sys "$r/sys" &&
      mount --rbind /dev "$r/dev" && mkdir -p "$r/.host" && cd "$r" && pivot_root . .host &&
      exec /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
        sh -c "umount -l /.host && rmdir /.host && exec \"\$@\"" sh "$@"' sh "$root" "$@"
}

# has OUTPUT PATTERN NAME: a line of OUTPUT matches PATTERN (grep -E); the
# output, a report of many lines, is shown as TAP comments when not.
has () {
  printf '%s\n' "$1" | grep -Eq -- "$2"
  ok $? "$3"
  printf '%s\n' "$1" | grep -Eq -- "$2" || printf '%s\n' "$1" | sed 's/^/#   /'
}

in_chroot dpkg -i /tmp/sandbox-runner.deb
is "$rc" 0 "the .deb installs into a fresh bookworm chroot"
[ "$rc" -eq 0 ] || printf '%s\n' "$out" "$err" | tail -20 | sed 's/^/# /'

in_chroot sandbox-runner --version
like "$out" "^sandbox-runner [0-9]" "sandbox-runner --version runs from the package"

# doctor reports on this host as the chroot sees it (no images, maybe no
# limits): 0, 1 or 2 are reports; 125 would be a runner that failed.
in_chroot sandbox-runner doctor
case $rc in 0|1|2) ok 0 "doctor runs from the package and reports (exit $rc)" ;;
  *) ok 1 "doctor runs from the package and reports (exit $rc)"; printf '%s\n' "$err" | sed 's/^/# /' ;;
esac
has "$out" "user namespaces" "its report covers user namespaces"
has "$out" "fix: .*/usr/share/sandbox-runner/rootfs/build-all.sh --import" \
  "and names the packaged image builder as the fix for missing images"

if [ -d "$root/srv/rootfs" ]; then
  in_chroot sandbox-runner run --rootfs /srv/rootfs -- echo hello from the package
  is "$out" "hello from the package" "the packaged binary runs a container"
else
  skip "busybox is not installed: no container run"
fi
in_chroot sandbox-runner image list
is "$rc" 0 "image list runs (the helper binary in /usr/libexec is found)"

# Files where Debian policy puts them.
in_chroot dpkg -L sandbox-runner
files=$out
for f in /usr/bin/sandbox-runner /usr/libexec/sandbox-runner/sandbox-runner-full \
    /usr/libexec/sandbox-runner/sandbox-runner-http \
    /usr/share/man/man1/sandbox-runner.1.gz /usr/share/man/man5/sandbox-runner.conf.5.gz \
    /usr/share/man/man7/sandbox-runner-mcp.7.gz \
    /usr/share/bash-completion/completions/sandbox-runner \
    /usr/lib/systemd/user/sandbox-runner-http.service \
    /usr/share/doc/sandbox-runner/copyright \
    /usr/share/doc/sandbox-runner/examples/sandbox-runner.conf.example \
    /usr/share/sandbox-runner/rootfs/build-all.sh \
    /usr/share/sandbox-runner/rootfs/layer-diff.py; do
  printf '%s\n' "$files" | grep -qx "$f" && [ -e "$root$f" ]
  ok $? "the package installs $f"
done
printf '%s\n' "$files" | grep -Eqx '(/usr)?/lib/systemd/system/sandbox-runner-http.service'
ok $? "and the system unit in /lib/systemd/system"
grep -q '^ExecStart=/usr/bin/sandbox-runner ' "$root/lib/systemd/system/sandbox-runner-http.service"
ok $? "whose ExecStart is the packaged binary"
[ ! -e "$root/etc/systemd/system/multi-user.target.wants/sandbox-runner-http.service" ] &&
  [ ! -e "$root/etc/systemd/user/default.target.wants/sandbox-runner-http.service" ]
ok $? "the units are not enabled (the server needs a token file first)"
! grep -q '^sandbox-runner:' "$root/etc/passwd"
ok $? "no system user is made (the system unit runs as root)"

# Purge removes every file, and what the runner made as root.
in_chroot sandbox-runner run --rootfs /srv/rootfs -- true
in_chroot dpkg --purge sandbox-runner
is "$rc" 0 "dpkg --purge removes the package"
left=""
for f in $(printf '%s\n' "$files" | grep -v '^/\.$'); do
  [ -f "$root$f" ] && left="$left $f"
done
is "${left# }" "" "no file of the package is left"
for d in /var/lib/sandbox-runner /var/cache/sandbox-runner /etc/sandbox-runner \
    /usr/share/sandbox-runner /usr/libexec/sandbox-runner; do
  [ ! -e "$root$d" ]
  ok $? "purge leaves no $d"
done

done_testing
