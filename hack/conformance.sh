#!/usr/bin/env bash
# The end-to-end stage of `make test`: against one fresh `make run`, the conformance cases listed
# in a ratchet file, then the README's walk-throughs (hack/walkthrough.sh): the REST one and the
# MCP one of its "Agents" section.
#
# Usage: hack/conformance.sh CONFORMANCE_DIR PASS_FILE DEV_DIR READY_MINUTES
# Starts `make run` with DEV_DIR as its state directory (so a developer's own .dev is left
# alone), waits for DEV_DIR/env, runs `go test` in CONFORMANCE_DIR restricted to the cases of
# PASS_FILE, runs the walk-through against the same instance, then stops the instance. Exits
# non-zero when a listed case or the walk-through fails. Where the suite is not present (a clone
# outside the workspace) it says so and runs the walk-through alone: the project's own tests
# stand on their own.
set -euo pipefail

suite=${1:?conformance dir}
pass=${2:?pass file}
dev=${3:?dev dir}
ready_minutes=${4:-30}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

cases=
if [ ! -d "$suite" ]; then
  echo "conformance: $suite not found; skipping the conformance cases (they run where ../shared/conformance exists, as in CI)"
else
  cases=$(grep -E '^Test[A-Za-z0-9_]+$' "$pass" | paste -sd'|' - || true)
  if [ -z "$cases" ]; then
    echo "conformance: $pass lists no cases"
  fi
fi

rm -rf "$dev"
mkdir -p "$dev"
log="$dev/make-run.log"
# setsid: make run and everything it starts share one process group we can stop as a whole.
setsid make --no-print-directory run DEV_DIR="$dev" >"$log" 2>&1 &
runner=$!
stop() {
  # make exits at once on SIGTERM; payout-dev takes a few seconds to stop the control plane.
  # Wait for the whole group, and only then force what is left.
  kill -TERM -- "-$runner" 2>/dev/null || true
  for _ in $(seq 1 120); do pgrep -g "$runner" >/dev/null || return 0; sleep 0.5; done
  echo "conformance: the instance did not stop within 60 s; killing it"
  kill -KILL -- "-$runner" 2>/dev/null || true
}
trap stop EXIT

deadline=$((SECONDS + ready_minutes * 60))
until [ -f "$dev/env" ]; do
  if ! kill -0 "$runner" 2>/dev/null; then
    echo "conformance: make run exited before it was ready; its log:"; tail -n 50 "$log"; exit 1
  fi
  if [ $SECONDS -ge $deadline ]; then
    echo "conformance: make run not ready after $ready_minutes minutes; its log:"; tail -n 50 "$log"; exit 1
  fi
  sleep 1
done
echo "conformance: instance ready after ${SECONDS}s"

if [ -n "$cases" ]; then
  echo "conformance: running $(echo "$cases" | tr '|' '\n' | wc -l) listed cases"
  started=$SECONDS
  set +e
  (
    # shellcheck disable=SC1091
    source "$dev/env"
    cd "$suite"
    go test -count=1 -timeout 20m -run "^($cases)\$" -v ./... 2>&1
  ) | tee "$dev/conformance.log" | grep -E '^(--- |FAIL|ok|PASS)'
  status=${PIPESTATUS[0]}
  set -e
  if [ "$status" -ne 0 ]; then
    # CI keeps only this script's output: print what each failing case said (go test -v's
    # indented "file_test.go:N:" lines and their continuation), and the instance's last errors.
    echo "conformance: what the failing cases said:"
    failed=$(sed -n -E 's/^ *--- FAIL: ([^ ]+).*/\1/p' "$dev/conformance.log" | paste -sd' ' -)
    awk -v failed=" $failed " '/^=== (RUN|CONT|PAUSE|NAME)/ {name=$3; next}
         /^    [A-Za-z0-9_]+_test\.go:[0-9]+:/ {cont = index(failed, " " name " ") > 0; if (cont) print name ": " $0; next}
         cont && /^        / {print name ": " $0; next}
         {cont=0}' "$dev/conformance.log" | head -n 200
    echo "conformance: the instance's last error lines:"
    # (optimistic-lock conflicts of the controllers' status writes are routine: left out)
    grep -E '"level":"error"|panic|cache did not|exited|restarting' "$dev/payoutd.log" "$log" 2>/dev/null |
      grep -v 'the object has been modified' | tail -n 40 || true
    echo "conformance: listed cases failed (full output: $dev/conformance.log; instance log: $log)"
    exit "$status"
  fi
  echo "conformance: all listed cases passed in $((SECONDS - started))s"
fi

# walkthrough NAME: one of the README's walk-throughs, verbatim, on the same instance (its output:
# $dev/NAME.log); the script exits when it fails.
walkthrough() {
  local name=$1 status
  set +e
  WALKTHROUGH=$name "$here/walkthrough.sh" "$dev" > "$dev/$name.log" 2>&1
  status=$?
  set -e
  if [ "$status" -ne 0 ]; then
    tail -n 40 "$dev/$name.log"
    echo "conformance: the README's $name failed (full output: $dev/$name.log; instance log: $log)"
    exit "$status"
  fi
  tail -n 1 "$dev/$name.log"
}
# The REST walk-through, then the "Agents" one: the MCP Inspector's CLI, a client no one here
# wrote, drives the tool server.
walkthrough walkthrough
walkthrough mcp-walkthrough
