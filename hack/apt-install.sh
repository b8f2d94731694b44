#!/usr/bin/env bash
# Installs a Debian package for the tests that run a real server of it (redis-server,
# postgresql), once per machine, without starting its system service: the tests start private
# instances of their own on free loopback ports.
#
# Usage: hack/apt-install.sh PACKAGE WHY
# Not root: fails, saying WHY the package is needed and what to run (CI runs as root).
set -euo pipefail
pkg=$1 why=$2

if [ "$(id -u)" != 0 ]; then
  cat >&2 <<MSG
$pkg is not installed, and only root can install it here. $why: install Debian's package and
run make again:
    sudo apt-get update && sudo apt-get install -y $pkg
MSG
  exit 1
fi

echo "[$pkg] installing Debian's $pkg with apt-get (once per machine)" >&2
# The package's maintainer scripts would start the system service (a server for nobody on its
# well-known port): forbid service starts while it installs, unless a policy is already in place.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' > "$policy"
  chmod 755 "$policy"
  trap 'rm -f "$policy"' EXIT
fi
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -qq --no-install-recommends "$pkg" >&2; then
  # a fresh machine has no package lists yet
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends "$pkg" >&2
fi
