# Operator files: bash completion, the systemd units (system and user),
# a configuration example, and the image recipes with their builder.

# Where bash-completion loads completions from on first use.
bashcompletiondir = $(datadir)/bash-completion/completions
dist_bashcompletion_DATA = contrib/bash-completion/sandbox-runner

# The unit for the HTTP transport, with ExecStart pointing at this
# install's bindir; systemd reads $(prefix)/lib/systemd/system for /usr
# and /usr/local.  make systemdunitdir=/lib/systemd/system to change it.
systemdunitdir = $(prefix)/lib/systemd/system
systemduserunitdir = $(prefix)/lib/systemd/user
EXTRA_DIST += contrib/systemd/sandbox-runner-http.service \
	contrib/systemd/user/sandbox-runner-http.service \
	contrib/sandbox-runner.conf.example contrib/haproxy/sandbox-runner.cfg \
	contrib/kubernetes/README.md
# The Debian packaging, and the document it ships: a .deb builds from the
# release tarball too (tests/integration/deb.sh builds it under distcheck).
EXTRA_DIST += debian doc/ARCHITECTURE.md

# The default images' recipes and rootfs/build-all.sh, in
# $(pkgdatadir)/rootfs: an installed host builds and imports its images
# with them (doctor's fix names them), without a checkout.  Every recipe
# there is, whichever languages the tree has.
pkgrootfsdir = $(pkgdatadir)/rootfs

install-data-local: install-systemd-unit install-rootfs
uninstall-local: uninstall-systemd-unit uninstall-rootfs

install-rootfs:
	$(MKDIR_P) '$(DESTDIR)$(pkgrootfsdir)'
	$(INSTALL_SCRIPT) '$(srcdir)/rootfs/build-all.sh' '$(srcdir)/rootfs/build-image.sh' \
	  '$(srcdir)/rootfs/layer-diff.py' '$(DESTDIR)$(pkgrootfsdir)'
	$(INSTALL_DATA) '$(srcdir)'/rootfs/*.recipe '$(DESTDIR)$(pkgrootfsdir)'

uninstall-rootfs:
	rm -rf '$(DESTDIR)$(pkgrootfsdir)'

install-systemd-unit:
	$(MKDIR_P) '$(DESTDIR)$(systemdunitdir)' '$(DESTDIR)$(systemduserunitdir)'
	sed -e 's|/usr/local/bin/sandbox-runner|$(bindir)/sandbox-runner|g' \
	  '$(srcdir)/contrib/systemd/sandbox-runner-http.service' \
	  > '$(DESTDIR)$(systemdunitdir)/sandbox-runner-http.service'
	sed -e 's|/usr/local/bin/sandbox-runner|$(bindir)/sandbox-runner|g' \
	  '$(srcdir)/contrib/systemd/user/sandbox-runner-http.service' \
	  > '$(DESTDIR)$(systemduserunitdir)/sandbox-runner-http.service'

uninstall-systemd-unit:
	rm -f '$(DESTDIR)$(systemdunitdir)/sandbox-runner-http.service' \
	  '$(DESTDIR)$(systemduserunitdir)/sandbox-runner-http.service'

.PHONY: install-systemd-unit uninstall-systemd-unit install-rootfs uninstall-rootfs
