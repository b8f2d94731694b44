#!/usr/bin/env bash
# Makes sure PostgreSQL's server binaries are installed, for the tests of the transfer archive
# (test/pgtest starts a private server per suite: initdb into a scratch directory,
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

if [ -n "${PG_BIN:-}" ]; then
  echo "postgres: PG_BIN=$PG_BIN holds no initdb, pg_ctl and postgres" >&2
  exit 1
fi
# The default cluster the package creates (/var/lib/postgresql/*/main) stays stopped; the tests
# never use it.
"$(dirname "$0")/apt-install.sh" postgresql "The tests of the transfer archive run a real PostgreSQL (or set PG_BIN to a directory holding initdb, pg_ctl and postgres)"

bin=$(find_pg)
[ -n "$bin" ] || { echo "postgres: apt-get installed the package but no server binaries were found under /usr/lib/postgresql" >&2; exit 1; }
echo "$bin"
