#!/usr/bin/env bash
# Makes sure Debian's redis-server is installed, for the tests of the shared rate limits
# (test/testredis starts a private instance of it per suite, on a free loopback port with a
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

"$(dirname "$0")/apt-install.sh" redis-server "The tests of the shared rate limits run a real Redis"

bin=$(find_redis)
[ -n "$bin" ] || { echo "redis-server: apt-get installed the package but no redis-server binary was found" >&2; exit 1; }
echo "$bin"
