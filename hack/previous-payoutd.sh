#!/usr/bin/env bash
# Builds payoutd as the previous release (the commit in hack/previous-release) built it, into the
# per-user tool cache, and prints the binary's path. The source comes from this clone's history
# (`git archive`, so nothing is registered in the repository); a shallow clone fetches it from
# its origin first, and a clone that cannot have it fails, saying so. A second call finds the
# cached binary and builds nothing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
commit=$(grep -v '^#' "$root/hack/previous-release" | head -n 1)
cache=${TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/payout-operator}
out="$cache/previous/$commit-$(go env GOVERSION)-$(go env GOOS)-$(go env GOARCH)"
if [ -x "$out/payoutd" ]; then
	echo "$out/payoutd"
	exit 0
fi
have() { git -C "$root" cat-file -e "$commit^{commit}" 2>/dev/null; }
if ! have; then
	# a shallow clone (a CI checkout): ask its origin for the commit, or for the whole history
	git -C "$root" fetch --quiet origin "$commit" 2>/dev/null ||
		git -C "$root" fetch --quiet --unshallow 2>/dev/null || true
fi
if ! have; then
	echo "the previous release $commit (hack/previous-release) is not in this clone's history: fetch it (git fetch --unshallow)" >&2
	exit 1
fi
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
git -C "$root" archive "$commit" | tar -x -C "$src"
mkdir -p "$out"
(cd "$src" && go build -o "$out/payoutd.$$" ./cmd/payoutd)
mv "$out/payoutd.$$" "$out/payoutd"
echo "$out/payoutd"
