#!/usr/bin/env bash
# Makes sure PostgreSQL's server binaries are installed, for the tests of the transfer archive
# (internal/archive/pgtest starts a private server per suite: initdb into a scratch directory,
# a free loopback port, stopped with the test; nothing here starts one). Prints the directory of
# the binaries (initdb, pg_ctl, postgres).
#
# Found: $PG_BIN, else the newest /usr/lib/postgresql/*/bin (Debian's layout), else
# `pg_config --bindir`. Missing and root (CI runs as root): installs Debian's postgresql with
# apt-get, without starting its system service nor creating its default cluster. Missing and not
# root: fails, saying what to run.
set -euo pipefail

find_pg() {
  local d
  if [ -n "${PG_BIN:-}" ] && [ -x "$PG_BIN/postgres" ] && [ -x "$PG_BIN/initdb" ]; then
    echo "$PG_BIN"; return
  fi
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4,4 -rn); do
    if [ -x "$d/postgres" ] && [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
      echo "$d"; return
    fi
  done
  if command -v pg_config >/dev/null 2>&1; then
    d=$(pg_config --bindir)
    if [ -x "$d/postgres" ] && [ -x "$d/initdb" ]; then
      echo "$d"; return
    fi
  fi
}

bin=$(find_pg)
if [ -n "$bin" ]; then
  echo "$bin"
  exit 0
fi

if [ "$(id -u)" != 0 ]; then
  cat >&2 <<'MSG'
PostgreSQL's server is not installed, and only root can install it here. The tests of the
transfer archive run a real PostgreSQL: install Debian's package and run make again:
    sudo apt-get update && sudo apt-get install -y postgresql
(or set PG_BIN to a directory holding initdb, pg_ctl and postgres)
MSG
  exit 1
fi

echo "[postgres] installing Debian's postgresql with apt-get (once per machine)" >&2
# The package's maintainer scripts would start the system service (a server on port 5432 for
# nobody): forbid service starts while it installs, unless a policy is already in place. The
# default cluster they create (/var/lib/postgresql/*/main) stays stopped; the tests never use it.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' > "$policy"
  chmod 755 "$policy"
  trap 'rm -f "$policy"' EXIT
fi
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -qq --no-install-recommends postgresql >&2; then
  # a fresh machine has no package lists yet
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends postgresql >&2
fi

bin=$(find_pg)
[ -n "$bin" ] || { echo "postgres: apt-get installed the package but no server binaries were found under /usr/lib/postgresql" >&2; exit 1; }
echo "$bin"
