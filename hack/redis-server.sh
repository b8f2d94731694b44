#!/usr/bin/env bash
# Makes sure Debian's redis-server is installed, for the tests of the shared rate limits
# (internal/testredis starts a private instance of it per suite, on a free loopback port with a
# scratch directory; nothing here starts one). Prints the path of the binary.
#
# Missing and root (CI runs as root): installs the package with apt-get, without starting its
# system service. Missing and not root: fails, saying what to run. apt keeps the downloaded
# package in its own cache; the installed binary is what later runs reuse.
set -euo pipefail

find_redis() {
  command -v redis-server 2>/dev/null || { [ -x /usr/bin/redis-server ] && echo /usr/bin/redis-server; } || true
}

bin=$(find_redis)
if [ -n "$bin" ]; then
  echo "$bin"
  exit 0
fi

if [ "$(id -u)" != 0 ]; then
  cat >&2 <<'EOF'
redis-server is not installed, and only root can install it here. The tests of the shared rate
limits run a real Redis: install Debian's package and run make again:
    sudo apt-get update && sudo apt-get install -y redis-server
EOF
  exit 1
fi

echo "[redis-server] installing Debian's redis-server with apt-get (once per machine)" >&2
# The package's maintainer scripts would start the system service (a Redis on port 6379 for
# nobody): forbid service starts while it installs, unless a policy is already in place.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' > "$policy"
  chmod 755 "$policy"
  trap 'rm -f "$policy"' EXIT
fi
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -qq --no-install-recommends redis-server >&2; then
  # a fresh machine has no package lists yet
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends redis-server >&2
fi

bin=$(find_redis)
[ -n "$bin" ] || { echo "redis-server: apt-get installed the package but no redis-server binary was found" >&2; exit 1; }
echo "$bin"
