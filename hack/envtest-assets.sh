#!/usr/bin/env bash
# Builds the envtest control plane (etcd, kube-apiserver, kubectl) from Go
# modules, because the usual setup-envtest download is not reachable from the
# machines this project is built on. The result is cached outside the repo,
# keyed by versions, and built in a temporary directory that is moved into
# place only when complete, so an interrupted build never looks finished.
#
# Usage: hack/envtest-assets.sh K8S_VERSION ETCD_VERSION DEST_DIR
set -euo pipefail

k8s_version=${1:?kubernetes version, e.g. v1.37.1}
etcd_version=${2:?etcd version, e.g. v3.6.16}
dest=${3:?destination directory}

if [[ -x "$dest/kube-apiserver" && -x "$dest/etcd" && -x "$dest/kubectl" ]]; then
  echo "envtest assets already built in $dest"
  exit 0
fi

export CGO_ENABLED=0 GOWORK=off GOFLAGS=-mod=mod
parent=$(dirname "$dest")
mkdir -p "$parent"
work=$(mktemp -d "$parent/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT
out="$work/bin"
mkdir -p "$out"

minor=${k8s_version#v}; major=${minor%%.*}; minor=${minor#*.}; minor=${minor%%.*}
staging_version="v0.${k8s_version#v1.}"

# --- kube-apiserver and kubectl -------------------------------------------
# k8s.io/kubernetes replaces its staging modules with local paths, which
# `go install pkg@version` refuses. A wrapper module that requires it and
# replaces each staging module with its published version builds instead.
echo ">> resolving k8s.io/kubernetes@$k8s_version"
upstream_mod=$(go mod download -json "k8s.io/kubernetes@$k8s_version" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
[[ -f "$upstream_mod" ]] || { echo "cannot find go.mod of k8s.io/kubernetes@$k8s_version" >&2; exit 1; }

k8s_mod="$work/k8s"
mkdir -p "$k8s_mod"
{
  echo "module bastion.local/envtest-k8s"
  grep -E '^(go|godebug) ' "$upstream_mod" || true
  echo "require k8s.io/kubernetes $k8s_version"
  sed -n 's#^[[:space:]]*\(k8s.io/[^ ]*\) => ./staging/src/k8s.io/.*#replace \1 => \1 '"$staging_version"'#p' "$upstream_mod"
} >"$k8s_mod/go.mod"
cat >"$k8s_mod/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO

git_version=$k8s_version
ld="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ld="$ld -X $pkg.gitVersion=$git_version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
done
for cmd in kube-apiserver kubectl; do
  echo ">> building $cmd $k8s_version"
  (cd "$k8s_mod" && go build -trimpath -ldflags "$ld" -o "$out/$cmd" "k8s.io/kubernetes/cmd/$cmd")
done

# --- etcd ------------------------------------------------------------------
# A separate module: kubernetes pulls a newer etcd client, and mixing the two
# in one build list would change the server we build.
etcd_mod="$work/etcd"
mkdir -p "$etcd_mod"
cat >"$etcd_mod/go.mod" <<GOMOD
module bastion.local/envtest-etcd

go 1.24

require go.etcd.io/etcd/server/v3 $etcd_version
GOMOD
echo ">> building etcd $etcd_version"
(cd "$etcd_mod" && go build -trimpath -ldflags "-s -w" -o "$out/etcd" go.etcd.io/etcd/server/v3)

rm -rf "$dest"
mv "$out" "$dest"
echo "envtest assets ready in $dest"
"$dest/kube-apiserver" --version
"$dest/etcd" --version | sed -n 1p  # sed reads to the end: head would SIGPIPE etcd under pipefail
