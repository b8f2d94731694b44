#!/usr/bin/env bash
# Installs an npm package once per version into the per-user tool cache and prints the directory
# of the installed package.
#
#   hack/npm-tool.sh NAME VERSION
#     -> ${TOOLS_CACHE:-${XDG_CACHE_HOME:-~/.cache}/payout-operator}/npm/NAME-VERSION/node_modules/NAME
#
# The package (and its dependencies) is installed into a scratch directory beside the cache
# entry and renamed into place when complete, so an entry that exists is whole: a second call,
# a second clone or a concurrent `make` reuses it without touching the network. Install scripts
# are not run (the packages used here need none).
set -euo pipefail

name=${1:?usage: $0 NAME VERSION}
version=${2:?usage: $0 NAME VERSION}
cache=${TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/payout-operator}/npm
# A scoped name (@scope/pkg) keeps its scope as a directory: npm/@scope/pkg-VERSION.
dest=$cache/$name-$version
pkg=$dest/node_modules/$name

if [ -f "$pkg/package.json" ]; then
  echo "$pkg"
  exit 0
fi
if [ -e "$dest" ]; then
  # not ours to trust (an interrupted copy by hand, a deleted file): set it aside and reinstall
  mv "$dest" "$dest.broken-$$-$(date +%s)"
fi

command -v npm >/dev/null || { echo "npm-tool: npm is not installed (Debian: apt-get install npm)" >&2; exit 1; }
mkdir -p "$(dirname "$dest")"
tmp=$(mktemp -d "$(dirname "$dest")/.tmp-$(basename "$dest").XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
printf '[npm-tool] installing %s@%s into %s (once per version)\n' "$name" "$version" "$dest" >&2
printf '{"private": true}\n' > "$tmp/package.json"
(cd "$tmp" && npm install --save-exact --ignore-scripts --no-audit --no-fund --loglevel=error \
  "$name@$version" >&2)
[ -f "$tmp/node_modules/$name/package.json" ] || { echo "npm-tool: $name@$version did not install" >&2; exit 1; }

# rename(2) onto a missing directory is atomic; when another install won the race, keep theirs.
if mv -T "$tmp" "$dest" 2>/dev/null; then
  trap - EXIT
elif [ ! -f "$pkg/package.json" ]; then
  echo "npm-tool: could not move the install into $dest" >&2
  exit 1
fi
echo "$pkg"
