# shellcheck shell=bash
# Shared by cluster-up.sh and cluster-down.sh: where things live.

K8S_VERSION=${K8S_VERSION:-v1.37.1}
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/bastion
# etcd, kube-apiserver and kubectl: the envtest assets (make envtest-assets).
ENVTEST_BIN=${ENVTEST_BIN:-$CACHE/envtest/k8s-${K8S_VERSION#v}-etcd-3.6.16-linux-amd64}
# kube-controller-manager, kube-scheduler, kubelet, kube-proxy (build.sh).
CLUSTER_BIN=${CLUSTER_BIN:-$CACHE/cluster/k8s-${K8S_VERSION#v}-linux-amd64}
# Everything the running cluster keeps: certs, data, logs, pids.
WORK=${WORK:-$CACHE/cluster-run}

NODE_NAME=bastion-node
POD_CIDR=10.244.0.0/24
SERVICE_CIDR=10.96.0.0/16
API_PORT=6443
# Not the default 2379, so that no other etcd on the host is disturbed.
ETCD_PORT=23790
ETCD_PEER_PORT=23800

CONTAINERD_SOCK=$WORK/containerd/containerd.sock
KUBECONFIG_FILE=$WORK/admin.kubeconfig

# Paths outside WORK that the kubelet, containerd or libcni write whatever
# their configuration says. cluster-up records which of them did not exist
# before, and cluster-down removes exactly those.
HOST_PATHS=(/var/lib/kubelet /var/log/containers /var/log/pods /var/lib/cni /run/containerd /run/netns /var/run/netns)
# Sysctls the cluster changes (ip_forward by us, the rest by the kubelet);
# cluster-up records their values, cluster-down puts them back.
SYSCTLS=(net.ipv4.ip_forward vm.overcommit_memory kernel.panic kernel.panic_on_oops)
# The processes, in start order; stopped in reverse.
COMPONENTS=(containerd etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy)

node_ip() {
  ip -4 route get 1.1.1.1 | sed -n 's/.* src \([0-9.]*\).*/\1/p'
}

log() { echo "[$(date +%H:%M:%S)] $*"; }
