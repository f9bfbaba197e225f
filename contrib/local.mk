# Operator files: bash completion and the systemd units (system and user).

# Where bash-completion loads completions from on first use.
bashcompletiondir = $(datadir)/bash-completion/completions
dist_bashcompletion_DATA = contrib/bash-completion/sandbox-runner

# The unit for the HTTP transport, with ExecStart pointing at this
# install's bindir; systemd reads $(prefix)/lib/systemd/system for /usr
# and /usr/local.  make systemdunitdir=/lib/systemd/system to change it.
systemdunitdir = $(prefix)/lib/systemd/system
systemduserunitdir = $(prefix)/lib/systemd/user
EXTRA_DIST += contrib/systemd/sandbox-runner-http.service \
	contrib/systemd/user/sandbox-runner-http.service

install-data-local: install-systemd-unit
uninstall-local: uninstall-systemd-unit

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

.PHONY: install-systemd-unit uninstall-systemd-unit
