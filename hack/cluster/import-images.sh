#!/usr/bin/env bash
# Imports OCI image archives into the cluster's containerd (namespace
# k8s.io, where the kubelet looks), if a cluster is up.
#
# Usage: hack/cluster/import-images.sh ARCHIVE...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
source "$here/lib.sh"

if [[ ! -S $CONTAINERD_SOCK ]]; then
  echo "no cluster up in $WORK: images not imported (make cluster-up, then make images)"
  exit 0
fi
for a in "$@"; do
  ctr --address "$CONTAINERD_SOCK" -n k8s.io images import "$a" | sed 's/^/  /'
done
