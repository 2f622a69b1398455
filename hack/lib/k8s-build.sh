# shellcheck shell=bash
# Builds Kubernetes commands (cmd/<name>) of k8s.io/kubernetes at a pinned
# version from the Go module proxy. Sourced by hack/envtest-assets.sh and
# hack/cluster/build.sh, so both build with the same wrapper module and the
# same version stamp.
#
# k8s.io/kubernetes replaces its staging modules with local paths, which
# `go install pkg@version` refuses. A wrapper module that requires it and
# replaces each staging module with its published version builds instead.
#
# k8s_build K8S_VERSION WORK_DIR OUT_DIR CMD...
k8s_build() {
  local k8s_version=$1 work=$2 out=$3
  shift 3
  local minor major staging_version upstream_mod k8s_mod ld pkg cmd
  minor=${k8s_version#v}; major=${minor%%.*}; minor=${minor#*.}; minor=${minor%%.*}
  staging_version="v0.${k8s_version#v1.}"

  echo ">> resolving k8s.io/kubernetes@$k8s_version"
  upstream_mod=$(CGO_ENABLED=0 GOWORK=off go mod download -json "k8s.io/kubernetes@$k8s_version" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  [[ -f "$upstream_mod" ]] || { echo "cannot find go.mod of k8s.io/kubernetes@$k8s_version" >&2; return 1; }

  k8s_mod="$work/k8s"
  mkdir -p "$k8s_mod" "$out"
  {
    echo "module bastion.local/k8s-build"
    grep -E '^(go|godebug) ' "$upstream_mod" || true
    echo "require k8s.io/kubernetes $k8s_version"
    sed -n 's#^[[:space:]]*\(k8s.io/[^ ]*\) => ./staging/src/k8s.io/.*#replace \1 => \1 '"$staging_version"'#p' "$upstream_mod"
  } >"$k8s_mod/go.mod"

  ld="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
  done
  # One `go build` for all commands: they share most packages, and one
  # build schedules them better than several in a row.
  local pkgs=()
  for cmd in "$@"; do pkgs+=("k8s.io/kubernetes/cmd/$cmd"); done
  echo ">> building $* $k8s_version"
  (cd "$k8s_mod" && CGO_ENABLED=0 GOWORK=off GOFLAGS=-mod=mod \
    go build -trimpath -ldflags "$ld" -o "$out/" "${pkgs[@]}")
}

# k8s_module_dir K8S_VERSION: where the k8s.io/kubernetes module zip is
# unpacked (pause.c lives in it).
k8s_module_dir() {
  GOWORK=off go mod download -json "k8s.io/kubernetes@$1" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'
}
