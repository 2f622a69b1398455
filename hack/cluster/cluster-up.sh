#!/usr/bin/env bash
# Brings up a single-node Kubernetes cluster on this host, for end-to-end
# tests: etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
# kubelet and kube-proxy built from Go modules (make envtest-assets and
# hack/cluster/build.sh), containerd, runc and the CNI plugins from Debian.
#
# Everything lives in $WORK: certificates, data, configs, logs and one pid
# file per process. What the cluster changes outside $WORK (sysctls, paths
# the kubelet and containerd write regardless of configuration) is recorded
# there first, so that cluster-down.sh undoes exactly that. Run one cluster
# at a time; cluster-down.sh before a second cluster-up.sh.
#
# Usage: hack/cluster/cluster-up.sh   (as root; WORK may be set)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
source "$here/lib.sh"

[[ $EUID -eq 0 ]] || { echo "cluster-up needs root (containerd, kubelet, iptables)" >&2; exit 1; }
for b in "$ENVTEST_BIN"/{etcd,kube-apiserver,kubectl} "$CLUSTER_BIN"/{kube-controller-manager,kube-scheduler,kubelet,kube-proxy}; do
  [[ -x $b ]] || { echo "missing $b: run make envtest-assets cluster-bins" >&2; exit 1; }
done
if [[ -e $WORK/pids ]]; then
  echo "a cluster is already up in $WORK (make cluster-down first)" >&2
  exit 1
fi

# --- Debian packages (idempotent) ------------------------------------------
pkgs=(containerd runc containernetworking-plugins iptables conntrack)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  log "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi

ip=$(node_ip)
[[ -n $ip ]] || { echo "cannot find this host's IPv4 address" >&2; exit 1; }
mkdir -p "$WORK"/{pids,logs,pki,etc,cni/net.d,cni/ipam,containerd,etcd,kubelet}
log "cluster in $WORK, node $NODE_NAME at $ip"

# --- record the host state cluster-down restores ---------------------------
: >"$WORK/host-created"
for p in "${HOST_PATHS[@]}"; do
  [[ -e $p || -L $p ]] || echo "$p" >>"$WORK/host-created"
done
: >"$WORK/sysctls"
for s in "${SYSCTLS[@]}"; do
  echo "$s=$(sysctl -n "$s")" >>"$WORK/sysctls"
done
sysctl -q -w net.ipv4.ip_forward=1

# --- certificates -----------------------------------------------------------
pki=$WORK/pki
ssl() { openssl "$@" 2>/dev/null; }
ssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=bastion-e2e-ca \
  -keyout "$pki/ca.key" -out "$pki/ca.crt"
# cert NAME SUBJECT [SAN]: a key and a certificate signed by the CA.
cert() {
  local name=$1 subj=$2 san=${3:-}
  ssl req -newkey rsa:2048 -nodes -subj "$subj" -keyout "$pki/$name.key" -out "$pki/$name.csr"
  if [[ -n $san ]]; then
    printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$san" >"$pki/$name.ext"
  else
    printf 'extendedKeyUsage=clientAuth\n' >"$pki/$name.ext"
  fi
  ssl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 2 -extfile "$pki/$name.ext" -out "$pki/$name.crt"
}
cert apiserver /CN=kube-apiserver \
  "IP:$ip,IP:127.0.0.1,IP:10.96.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost"
cert admin "/O=system:masters/CN=bastion-e2e-admin"
ssl genrsa -out "$pki/sa.key" 2048
ssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub"

# One admin kubeconfig for every component: a test cluster, not a product.
cat >"$KUBECONFIG_FILE" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {server: "https://127.0.0.1:$API_PORT", certificate-authority: "$pki/ca.crt"}
users:
- name: admin
  user: {client-certificate: "$pki/admin.crt", client-key: "$pki/admin.key"}
contexts:
- name: e2e
  context: {cluster: e2e, user: admin}
current-context: e2e
EOF

# start NAME BINARY ARGS...: runs a component in its own session, output to
# logs/NAME.log, pid to pids/NAME.pid.
start() {
  local name=$1
  shift
  setsid "$@" >"$WORK/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$WORK/pids/$name.pid"
  log "started $name (pid $!)"
}
# wait_for WHAT SECONDS CMD...: polls CMD until it succeeds.
wait_for() {
  local what=$1 secs=$2
  shift 2
  for ((i = 0; i < secs * 2; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  echo "timed out waiting for $what; logs in $WORK/logs" >&2
  return 1
}
kubectl() { "$ENVTEST_BIN/kubectl" --kubeconfig "$KUBECONFIG_FILE" "$@"; }

# --- containerd ---------------------------------------------------------------
# restrict_oom_score_adj: the VM lacks CAP_SYS_RESOURCE, so runc cannot
# lower the pause container's oom_score_adj below ours.
cat >"$WORK/etc/containerd.toml" <<EOF
version = 2
root = "$WORK/containerd/root"
state = "$WORK/containerd/state"
[grpc]
  address = "$CONTAINERD_SOCK"
[plugins."io.containerd.internal.v1.opt"]
  path = "$WORK/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$WORK/containerd/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$WORK/cni/net.d"
EOF
# masquerading happens in kube-proxy (masqueradeAll), so a pod reaching a
# Service whose endpoint is on the same bridge gets its answer back through
# the host without br_netfilter.
cat >"$WORK/cni/net.d/10-bastion.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "bastion-e2e",
  "plugins": [
    {
      "type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
      "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_CIDR"}]], "routes": [{"dst": "0.0.0.0/0"}], "dataDir": "$WORK/cni/ipam"}
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
start containerd containerd --config "$WORK/etc/containerd.toml"

# --- etcd and the control plane ---------------------------------------------
start etcd "$ENVTEST_BIN/etcd" --data-dir "$WORK/etcd" --name e2e \
  --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster "e2e=http://127.0.0.1:$ETCD_PEER_PORT" \
  --unsafe-no-fsync
start kube-apiserver "$ENVTEST_BIN/kube-apiserver" \
  --etcd-servers "http://127.0.0.1:$ETCD_PORT" --secure-port "$API_PORT" --advertise-address "$ip" \
  --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" --client-ca-file "$pki/ca.crt" \
  --authorization-mode Node,RBAC --allow-privileged=true \
  --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
  --service-account-issuer https://kubernetes.default.svc.cluster.local \
  --service-cluster-ip-range "$SERVICE_CIDR" \
  --kubelet-client-certificate "$pki/admin.crt" --kubelet-client-key "$pki/admin.key" \
  --kubelet-preferred-address-types InternalIP
wait_for kube-apiserver 120 kubectl get --raw /readyz
start kube-controller-manager "$CLUSTER_BIN/kube-controller-manager" --kubeconfig "$KUBECONFIG_FILE" \
  --authentication-kubeconfig "$KUBECONFIG_FILE" --authorization-kubeconfig "$KUBECONFIG_FILE" \
  --bind-address 127.0.0.1 --leader-elect=false --use-service-account-credentials \
  --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
  --cluster-signing-cert-file "$pki/ca.crt" --cluster-signing-key-file "$pki/ca.key" \
  --service-cluster-ip-range "$SERVICE_CIDR"
start kube-scheduler "$CLUSTER_BIN/kube-scheduler" --kubeconfig "$KUBECONFIG_FILE" \
  --authentication-kubeconfig "$KUBECONFIG_FILE" --authorization-kubeconfig "$KUBECONFIG_FILE" \
  --bind-address 127.0.0.1 --leader-elect=false

# --- the node -------------------------------------------------------------------
wait_for containerd 60 test -S "$CONTAINERD_SOCK"
# The kubelet cannot start a pod sandbox without the pause image.
if [[ -n ${PAUSE_IMAGE_ARCHIVE:-} ]]; then
  ctr --address "$CONTAINERD_SOCK" -n k8s.io images import "$PAUSE_IMAGE_ARCHIVE" >/dev/null
  log "imported the pause image"
fi
cat >"$WORK/etc/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# cgroup v1 on these VMs: kubelet 1.37 refuses it unless told not to.
failCgroupV1: false
cgroupDriver: cgroupfs
failSwapOn: false
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: "$pki/ca.crt"}
authorization: {mode: Webhook}
address: $ip
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
podCIDR: $POD_CIDR
resolvConf: /etc/resolv.conf
# A throwaway cluster on a shared disk: evict late, collect images late.
evictionHard: {"nodefs.available": "2%", "imagefs.available": "2%", "memory.available": "100Mi"}
imageGCHighThresholdPercent: 99
imageGCLowThresholdPercent: 98
serializeImagePulls: false
EOF
start kubelet "$CLUSTER_BIN/kubelet" --config "$WORK/etc/kubelet.yaml" --kubeconfig "$KUBECONFIG_FILE" \
  --root-dir "$WORK/kubelet" --cert-dir "$WORK/kubelet/pki" --hostname-override "$NODE_NAME" --node-ip "$ip"

# kube-proxy: iptables, leaving the conntrack and route_localnet sysctls
# alone; masqueradeAll so that hairpin Service traffic returns through it.
cat >"$WORK/etc/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: {kubeconfig: "$KUBECONFIG_FILE"}
hostnameOverride: $NODE_NAME
clusterCIDR: $POD_CIDR
bindAddress: $ip
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
iptables: {masqueradeAll: true, localhostNodePorts: false}
conntrack: {maxPerCore: 0, min: 0}
EOF
start kube-proxy "$CLUSTER_BIN/kube-proxy" --config "$WORK/etc/kube-proxy.yaml"

# kube-proxy's first sync: until then a Service address has no rule on the
# node and is routed off it, where this machine's network answers it.
kube_proxy_synced() {
  local rc
  exec 3<>/dev/tcp/127.0.0.1/10249 || return 1
  printf 'GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
  grep -qE '^kubeproxy_sync_proxy_rules_last_timestamp_seconds(\{[^}]*\})? [1-9]' <&3
  rc=$?
  exec 3<&-
  return $rc
}
wait_for "kube-proxy's first sync of the rules" 120 kube_proxy_synced
wait_for "node $NODE_NAME Ready" 120 kubectl wait --for=condition=Ready "node/$NODE_NAME" --timeout=1s
wait_for "the default service account" 60 kubectl get serviceaccount default -n default

# No storage provisioner: two hostPath volumes in the work dir, of no
# class, which claims without a class bind to (the chart's SQLite claim).
for i in 0 1; do
  mkdir -p "$WORK/volumes/pv$i"
  chmod 0777 "$WORK/volumes/pv$i" # pods run as any UID; fsGroup skips hostPath
  kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolume
metadata: {name: local-pv$i}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ""
  hostPath: {path: "$WORK/volumes/pv$i", type: Directory}
EOF
done
log "cluster ready: export KUBECONFIG=$KUBECONFIG_FILE"
