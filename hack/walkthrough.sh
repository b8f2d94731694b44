#!/usr/bin/env bash
# Runs the README's walk-through, verbatim, against a running instance of `make run`.
#
# Usage: hack/walkthrough.sh [DEV_DIR] [README]     (defaults: .dev, README.md)
#
# Takes the ```sh blocks between <!-- walkthrough:begin --> and <!-- walkthrough:end --> of the
# README (WALKTHROUGH=mcp-walkthrough: between <!-- mcp-walkthrough:begin --> and its end, the
# "Agents" section's walk-through with the MCP Inspector, which also needs bin/mcp-inspector), in order, and runs them unchanged as one `bash -Eeuo pipefail` script, so that the
# variables and functions of one block reach the next, as in the reader's shell. Other fences
# (```text: sample output) are not run. The script runs in a scratch directory in which `.dev`
# is DEV_DIR and `bin` is this checkout's bin/, so the README's `source .dev/env` and
# `$PWD/bin` reach the instance under test wherever it keeps its state (make test uses
# .dev-e2e). Each block is printed before it runs. It fails when any command fails (the
# walk-through's own waits fail when a transfer does not reach the status they wait for),
# naming the README line of the block, or after WALKTHROUGH_TIMEOUT (default 10m).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dev=$(realpath -m "${1:-$root/.dev}")
readme=$(realpath -m "${2:-$root/README.md}")
limit=${WALKTHROUGH_TIMEOUT:-10m}
name=${WALKTHROUGH:-walkthrough}

if [ ! -f "$dev/env" ]; then
  echo "walkthrough: $dev/env not found: start the instance first (make run, or make run DEV_DIR=$dev)" >&2
  exit 1
fi
tools="bin/jq bin/cast bin/kubectl-payout bin/k8s/kubectl"
[ "$name" = walkthrough ] || tools="$tools bin/mcp-inspector"
for tool in $tools; do
  if [ ! -x "$root/$tool" ]; then
    echo "walkthrough: $root/$tool is missing: make build cast jq control-plane mcp-inspector (make run does all but the last)" >&2
    exit 1
  fi
done
for marker in "<!-- $name:begin -->" "<!-- $name:end -->"; do
  n=$(grep -cxF "$marker" "$readme" || true)
  if [ "$n" -ne 1 ]; then
    echo "walkthrough: $readme has $n lines '$marker'; want exactly one" >&2
    exit 1
  fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/walkthrough.XXXXXX")
trap 'rm -rf "$work"' EXIT
ln -s "$dev" "$work/.dev"
ln -s "$root/bin" "$work/bin"

# The generated script: for each block, a call that prints the block and records its README
# line, then the block's lines as they are.
awk -v q="'" -v begin="<!-- $name:begin -->" -v end="<!-- $name:end -->" '
  $0 == begin { inside = 1; next }
  $0 == end   { inside = 0; next }
  !inside { next }
  !fence && /^```(sh|bash)$/ { fence = "run"; n = 0; start = NR + 1; next }
  !fence && /^```/           { fence = "skip"; next }
  fence && /^```$/ {
    if (fence == "run") {
      blocks++
      print "__block " start " <<" q "__WALKTHROUGH_EOF__" q
      for (i = 1; i <= n; i++) print lines[i]
      print "__WALKTHROUGH_EOF__"
      for (i = 1; i <= n; i++) print lines[i]
    }
    fence = ""; next
  }
  fence == "run" { lines[++n] = $0 }
  END {
    if (fence) { print "walkthrough: a fence in the walk-through is not closed" > "/dev/stderr"; exit 1 }
    if (!blocks) { print "walkthrough: no sh blocks between the markers" > "/dev/stderr"; exit 1 }
  }
' "$readme" > "$work/blocks.sh"

printf '__readme=%q\n' "$(basename "$readme")" > "$work/walkthrough.sh"
cat >> "$work/walkthrough.sh" <<'EOF'
__line=?
__block() {
  __line=$1
  printf '\n\033[1m── %s:%s\033[0m\n' "$__readme" "$1"
  sed 's/^/$ /'
}
trap '__rc=$?; [ "$__rc" -eq 0 ] || echo "walkthrough: the block at $__readme:$__line failed (exit $__rc): $BASH_COMMAND" >&2' EXIT
EOF
cat "$work/blocks.sh" >> "$work/walkthrough.sh"

blocks=$(grep -c '^__block ' "$work/blocks.sh")
echo "walkthrough: $blocks blocks of $(basename "$readme") against $dev"
start=$SECONDS
set +e
(cd "$work" && timeout -k 10s "$limit" bash -Eeuo pipefail ./walkthrough.sh </dev/null)
status=$?
set -e
if [ "$status" -eq 124 ]; then
  echo "walkthrough: not done after $limit" >&2
fi
if [ "$status" -ne 0 ]; then
  echo "walkthrough: FAILED after $((SECONDS - start)) s" >&2
  exit "$status"
fi
echo
echo "walkthrough: passed in $((SECONDS - start)) s"
