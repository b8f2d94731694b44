#!/usr/bin/env bash
# Measures `make run` from start to a written env file, then stops the instance.
# Usage: hack/time-make-run.sh [DEV_DIR]   (default .dev-timing, kept apart from .dev)
set -euo pipefail
dev=${1:-$PWD/.dev-timing}
start=$(date +%s.%N)
setsid make --no-print-directory run DEV_DIR="$dev" >"/tmp/time-make-run.log" 2>&1 &
pid=$!
stop() {
  kill -TERM -- "-$pid" 2>/dev/null || true
  for _ in $(seq 1 120); do pgrep -g "$pid" >/dev/null || return 0; sleep 0.5; done
}
trap stop EXIT
until [ -f "$dev/env" ]; do
  kill -0 "$pid" 2>/dev/null || { echo "make run exited; see /tmp/time-make-run.log"; exit 1; }
  sleep 0.05
done
end=$(date +%s.%N)
printf 'make run ready after %.1f s (%s)\n' "$(echo "$end - $start" | bc)" "$dev"
