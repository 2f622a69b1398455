#!/usr/bin/env bash
# Builds the node and control-plane commands the envtest assets lack
# (kube-controller-manager, kube-scheduler, kubelet, kube-proxy) from Go
# modules, with the same wrapper module as hack/envtest-assets.sh. The
# cluster takes etcd, kube-apiserver and kubectl from the envtest assets.
# Cached outside the repo, keyed by version; built in a temporary directory
# moved into place at the end so that an interrupted build never looks done.
#
# Usage: hack/cluster/build.sh K8S_VERSION DEST_DIR
set -euo pipefail

k8s_version=${1:?kubernetes version, e.g. v1.37.1}
dest=${2:?destination directory}
cmds=(kube-controller-manager kube-scheduler kubelet kube-proxy)

done_already=1
for c in "${cmds[@]}"; do [[ -x "$dest/$c" ]] || done_already=0; done
if (( done_already )); then
  echo "cluster binaries already built in $dest"
  exit 0
fi

parent=$(dirname "$dest")
mkdir -p "$parent"
work=$(mktemp -d "$parent/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT

# shellcheck source=../lib/k8s-build.sh
source "$(dirname "$0")/../lib/k8s-build.sh"
k8s_build "$k8s_version" "$work" "$work/bin" "${cmds[@]}"

rm -rf "$dest"
mv "$work/bin" "$dest"
echo "cluster binaries ready in $dest"
