#!/usr/bin/env bash
# Fails unless each patched copy under third_party/ is its module's release, as the Go module
# proxy serves it, with the patch kept beside it applied, and nothing else: the copies go.mod
# replaces modules with are reviewed as patches, never edited in place.
#
# Usage: hack/check-third-party.sh   (make check-third-party; part of make test)
set -euo pipefail

cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# copy dir module version: third_party/<dir> is <module>@<version> plus third_party/<dir>.patch
check() {
	local dir=$1 module=$2 version=$3 src
	grep -q "^replace $module => ./third_party/$dir\$" go.mod ||
		{ echo "go.mod does not replace $module with ./third_party/$dir" >&2; return 1; }
	grep -q "^	$module $version\$" go.mod ||
		{ echo "go.mod does not require $module $version" >&2; return 1; }
	src=$(go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	[ -d "$src" ] || { echo "go mod download $module@$version gave no directory" >&2; return 1; }
	cp -r "$src" "$tmp/$dir"
	chmod -R u+w "$tmp/$dir"
	(cd "$tmp/$dir" && patch -p1 -s --no-backup-if-mismatch <"$OLDPWD/third_party/$dir.patch")
	if ! diff -r "$tmp/$dir" "third_party/$dir"; then
		echo "third_party/$dir is not $module@$version with third_party/$dir.patch applied" >&2
		return 1
	fi
	echo "third_party/$dir: $module@$version with third_party/$dir.patch"
}

check go-sdk github.com/modelcontextprotocol/go-sdk v1.8.0
