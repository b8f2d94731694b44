#!/usr/bin/env bash
# Builds one component of the local control plane from the Go module proxy into DEST_DIR.
#
# setup-envtest downloads release binaries from a bucket this machine cannot reach, so the
# binaries are built from source. Each tool gets its own throw-away module so that its
# dependency graph never leaks into the project's go.mod. The Makefile calls this only when a
# binary is missing from the per-user cache, so a version is built once per machine.
#
# Usage: hack/build-control-plane.sh kubernetes|etcd VERSION DEST_DIR
#   kubernetes: kube-apiserver and kubectl from k8s.io/kubernetes (about 10 minutes and 3 GB of
#               memory on 2 cores); etcd: etcd from go.etcd.io/etcd/server/v3 (about 75 s).
set -euo pipefail

component=${1:?usage: $0 kubernetes|etcd VERSION DEST_DIR}
version=${2:?version missing}
dest=${3:?destination missing}
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/payout-cp-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
log() { printf '[control-plane] %s\n' "$*" >&2; }

# build MODDIR LDFLAGS PKG... builds into a scratch directory; binaries are moved into $dest
# only once complete, so a half-written binary never looks cached.
build() {
  local moddir=$1 ldflags=$2; shift 2
  mkdir -p "$work/out"
  (cd "$moddir" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "$ldflags" -o "$work/out/" "$@")
}

case "$component" in
kubernetes)
  log "building kube-apiserver and kubectl $version (about 10 minutes and 3 GB of memory on 2 cores, once per version)"
  mod="$work/k8s"
  mkdir -p "$mod"
  printf 'module payout.local/tools/kubernetes\n\ngo 1.26\n' > "$mod/go.mod"
  # k8s.io/kubernetes points its staging modules at ./staging; outside its repository they must
  # be replaced with their published v0.x releases, listed in kubernetes' own go.mod.
  staging="v0.${version#v1.}"
  kmod=$(cd "$mod" && go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
  {
    printf '\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "$version"
    sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#\t\1 => \1 '"$staging"'#p' "$kmod"
    printf ')\n'
  } >> "$mod/go.mod"
  (cd "$mod" && go get "k8s.io/kubernetes@$version")
  minor=${version#v1.}; minor=${minor%%.*}
  ld="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $p.gitVersion=$version -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  build "$mod" "$ld" k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl
  mv -f "$work/out/kube-apiserver" "$work/out/kubectl" "$dest/"
  ;;
etcd)
  log "building etcd $version (about 75 seconds, once per version)"
  mod="$work/etcd"
  mkdir -p "$mod"
  printf 'module payout.local/tools/etcd\n\ngo 1.26\n' > "$mod/go.mod"
  (cd "$mod" && go get "go.etcd.io/etcd/server/v3@$version")
  build "$mod" "-s -w" go.etcd.io/etcd/server/v3
  mv -f "$work/out/"* "$dest/etcd"
  ;;
*)
  echo "unknown component $component" >&2; exit 2 ;;
esac
log "ready in $dest"
