#!/usr/bin/env bash
# Tears down the cluster cluster-up.sh started and undoes its changes to the
# host: processes (by their recorded pids), containers, mounts, the cni0
# bridge, KUBE-/CNI- iptables rules, kubepods cgroups, sysctls, and the paths
# outside $WORK that did not exist before. Then removes $WORK. Safe to run
# again, and on a half-started cluster.
#
# Usage: hack/cluster/cluster-down.sh   (as root; WORK as for cluster-up)
set -uo pipefail # not -e: every step is tried even if one fails
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
source "$here/lib.sh"

[[ $EUID -eq 0 ]] || { echo "cluster-down needs root" >&2; exit 1; }
if [[ ! -d $WORK ]]; then
  echo "no cluster in $WORK"
  exit 0
fi
failed=0

running() { [[ -f $WORK/pids/$1.pid ]] && kill -0 "$(cat "$WORK/pids/$1.pid")" 2>/dev/null; }
kubectl() { "$ENVTEST_BIN/kubectl" --kubeconfig "$KUBECONFIG_FILE" --request-timeout=10s "$@"; }
ctr_() { ctr --address "$CONTAINERD_SOCK" -n k8s.io "$@"; }

# 1. Let the kubelet stop every pod itself, so that each sandbox's network
# is released through CNI (veth, IP, masquerade rules).
if running kube-apiserver && running kubelet; then
  log "deleting every pod"
  for ns in $(kubectl get ns -o jsonpath='{.items[*].metadata.name}' 2>/dev/null); do
    kubectl delete deployments,replicasets,statefulsets,daemonsets,jobs --all -n "$ns" --wait=false >/dev/null 2>&1
    kubectl delete pods --all -n "$ns" --grace-period=1 --wait=false >/dev/null 2>&1
  done
  for ((i = 0; i < 60; i++)); do
    [[ -z $(ctr_ tasks ls -q 2>/dev/null) ]] && break
    sleep 1
  done
fi

# 2. Stop the processes by pid, in reverse start order.
stop() {
  local name=$1 pidfile=$WORK/pids/$1.pid pid
  [[ -f $pidfile ]] || return 0
  pid=$(cat "$pidfile")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null
    for ((i = 0; i < 40; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    if kill -0 "$pid" 2>/dev/null; then
      log "$name (pid $pid) ignored SIGTERM; killing it"
      kill -KILL "$pid" 2>/dev/null
    fi
    log "stopped $name (pid $pid)"
  fi
  rm -f "$pidfile"
}
for ((c = ${#COMPONENTS[@]} - 1; c >= 0; c--)); do
  name=${COMPONENTS[c]}
  if [[ $name == containerd ]] && running containerd; then
    # Containers the kubelet left: kill their tasks, so that their shims exit.
    for id in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks kill -s SIGKILL "$id" >/dev/null 2>&1; done
    sleep 1
    for id in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks delete -f "$id" >/dev/null 2>&1; done
  fi
  stop "$name"
done
# Shims of this containerd (they outlive it by design): found by the socket
# they were given, which names our work dir and nothing else.
for pid in $(pgrep -f -- "-address $CONTAINERD_SOCK" 2>/dev/null); do
  log "stopping leftover shim pid $pid"
  kill -KILL "$pid" 2>/dev/null
done
sleep 0.5

# 3. Mounts under the work dir and the paths outside it, deepest first.
mounts() {
  awk '{print $2}' /proc/self/mounts | while read -r m; do
    m=$(printf '%b' "$m") # /proc/mounts escapes spaces as \040
    case $m in
      "$WORK"/* | /var/lib/kubelet/* | /run/containerd/* | /run/netns/* | /var/run/netns/* | /var/lib/kubelet | /run/netns) echo "$m" ;;
    esac
  done | sort -r
}
for m in $(mounts); do
  umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || { echo "cannot unmount $m" >&2; failed=1; }
done

# 4. Network: the bridge (the pods' veths went with their namespaces).
if ip link show cni0 >/dev/null 2>&1; then
  ip link delete cni0 && log "deleted cni0"
fi

# 5. iptables: kube-proxy removes its own rules; then every KUBE-/CNI-
# chain and rule left (the kubelet's canaries, the bridge plugin's
# masquerade), table by table, with the host's own rules kept as they were.
if [[ -x $CLUSTER_BIN/kube-proxy ]]; then
  "$CLUSTER_BIN/kube-proxy" --cleanup >/dev/null 2>&1
fi
for tool in iptables ip6tables; do
  command -v "$tool-save" >/dev/null || continue
  for table in filter nat mangle raw; do
    dump=$("$tool-save" -t "$table" 2>/dev/null) || continue
    grep -qE 'KUBE-|CNI-' <<<"$dump" || continue
    grep -vE 'KUBE-|CNI-' <<<"$dump" | "$tool-restore" -T "$table" || { echo "cannot clean $tool $table" >&2; failed=1; }
    log "removed KUBE-/CNI- rules from $tool $table"
  done
done

# 6. cgroups the kubelet and containerd made (cgroupfs driver).
for root in /sys/fs/cgroup/*/; do
  [[ -d $root/kubepods ]] || continue
  find "$root/kubepods" -depth -type d -exec rmdir {} \; 2>/dev/null
  [[ -d $root/kubepods ]] && { echo "cannot remove $root/kubepods" >&2; failed=1; }
done

# 7. Sysctls back to what they were.
if [[ -f $WORK/sysctls ]]; then
  while IFS= read -r kv; do
    [[ -n $kv ]] && sysctl -q -w "$kv"
  done <"$WORK/sysctls"
fi

# 8. Paths outside the work dir that the cluster created.
if [[ -f $WORK/host-created ]]; then
  while IFS= read -r p; do
    [[ -n $p && ( -e $p || -L $p ) ]] && rm -rf --one-file-system "$p"
  done <"$WORK/host-created"
fi

if ((failed)); then
  echo "cluster-down: some state is left; $WORK kept for inspection" >&2
  exit 1
fi
rm -rf --one-file-system "$WORK"
log "cluster down; host restored"
