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

# --- kube-apiserver and kubectl -------------------------------------------
# shellcheck source=lib/k8s-build.sh
source "$(dirname "$0")/lib/k8s-build.sh"
k8s_build "$k8s_version" "$work" "$out" kube-apiserver kubectl

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
