#!/usr/bin/env bash
# Builds Bastion's images without a Docker engine or a registry, with the
# same layout as the Dockerfile's targets:
#   manager           /bastion, user 65532, entrypoint /bastion, cmd manager
#   runner-<app>      Debian bookworm (debootstrap --variant=minbase) with
#                     ca-certificates, git, openssh-client, the app's tools,
#                     /usr/local/bin/bastion-runner, user runner 65532,
#                     workdir /bastion/work, entrypoint bastion-runner,
#                     cmd runner
#   pause             registry.k8s.io/pause, compiled from the
#                     k8s.io/kubernetes module's pause.c (the cluster's
#                     sandbox image; there is no registry to pull it from)
# Each is written as a single-layer OCI archive by hack/ociimage into
# OUT_DIR; cluster-up/e2e import them with `ctr images import`.
# debootstrap's downloads are cached as tarballs in $CACHE/images/debootstrap,
# and the Debian base of each runner image in $CACHE/images/rootfs.
#
# Usage: hack/images/build.sh OUT_DIR BASTION_BIN TERRAFORM_BIN REGISTRY TAG [IMAGE...]
#   IMAGE: pause manager runner-ansible runner-terraform runner-bash (default all)
#   The runner images take the bastion-runner built beside BASTION_BIN
#   (`make build` makes both), or $RUNNER_BIN.
set -euo pipefail

out=${1:?output directory}
bastion=${2:?static bastion binary}
terraform=${3:?terraform binary}
registry=${4:?registry, e.g. ghcr.io/bastion-dev}
tag=${5:?tag}
shift 5
images=("$@")
((${#images[@]})) || images=(pause manager runner-ansible runner-terraform runner-bash)

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
k8s_version=${K8S_VERSION:-v1.37.1}
debian=${DEBIAN:-bookworm}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/bastion/images
pause_tag=3.10

[[ $EUID -eq 0 ]] || { echo "building root filesystems needs root (file owners, chroot)" >&2; exit 1; }
mkdir -p "$out" "$cache/debootstrap"
stage=$(mktemp -d "$out/.stage.XXXXXX")
trap 'rm -rf --one-file-system "$stage"' EXIT

ociimage="$stage/ociimage"
(cd "$repo" && CGO_ENABLED=0 go build -o "$ociimage" ./hack/ociimage)

log() { echo "[$(date +%H:%M:%S)] $*"; }

# debian_rootfs DIR PACKAGES: a minbase Debian with PACKAGES, the runner's
# user and /usr/local/bin/bastion-runner (the runner alone: a fifth of
# bastion's size, and none of the manager's code in a task's pod).
debian_rootfs() {
  local dir=$1 pkgs=$2
  debian_base "$dir" "$pkgs"
  # The Dockerfile's `groupadd runner; useradd runner`, without running
  # them in a chroot.
  echo "runner:x:65532:" >>"$dir/etc/group"
  echo "runner:x:65532:65532::/bastion/work/home:/usr/sbin/nologin" >>"$dir/etc/passwd"
  echo "runner:!:20000:0:99999:7:::" >>"$dir/etc/shadow"
  install -m 0755 "$runner_bin" "$dir/usr/local/bin/bastion-runner"
  install -d -m 0755 "$dir/bastion/work"
}

# debian_base DIR PACKAGES: the Debian part of a runner's file system. It
# changes only with the package list (and this script's way of making it),
# so it is kept as an uncompressed tar in $CACHE/images/rootfs: unpacking
# takes seconds, where debootstrap's second stage (every package's
# configure scripts) takes half a minute or more per image. The key covers
# debootstrap_base's own text, so changing how a base is made makes a new
# one.
debian_base() {
  local dir=$1 pkgs=$2 key cached
  key=$(printf '%s %s %s\n%s' "$debian" "$mirror" "$pkgs" "$(declare -f debootstrap_base)" | sha256sum | cut -c1-16)
  cached="$cache/rootfs/$debian-minbase-$key.tar"
  if [[ -f $cached ]]; then
    log "unpacking the cached $debian base ($pkgs)"
    mkdir -p "$dir"
    tar -xpf "$cached" --numeric-owner --xattrs --xattrs-include='*' -C "$dir"
    return
  fi
  debootstrap_base "$dir" "$pkgs"
  mkdir -p "$cache/rootfs"
  tar -cf "$cached.tmp" --numeric-owner --xattrs --xattrs-include='*' -C "$dir" .
  mv "$cached.tmp" "$cached"
}

# debootstrap_base DIR PACKAGES: debootstrap from a cached tarball of the
# .debs when one exists for exactly that package list.
debootstrap_base() {
  local dir=$1 pkgs=$2 key tarball
  key=$(printf '%s %s %s' "$debian" "$mirror" "$pkgs" | sha256sum | cut -c1-16)
  tarball="$cache/debootstrap/$debian-minbase-$key.tgz"
  if [[ ! -f $tarball ]]; then
    log "downloading Debian packages for: $pkgs"
    rm -rf "$dir.dl"
    debootstrap --variant=minbase --include="$pkgs" --make-tarball="$tarball.tmp" "$debian" "$dir.dl" "$mirror" >/dev/null
    rm -rf "$dir.dl"
    mv "$tarball.tmp" "$tarball"
  fi
  log "debootstrap $debian ($pkgs)"
  debootstrap --variant=minbase --include="$pkgs" --unpack-tarball="$tarball" "$debian" "$dir" "$mirror" >/dev/null
  # What a container runtime provides, and what an image should not carry.
  rm -rf "${dir:?}"/dev/* "$dir"/proc/* "$dir"/sys/* "$dir"/var/lib/apt/lists/* \
    "$dir"/var/cache/apt/archives/*.deb "$dir"/var/cache/apt/*.bin "$dir"/var/log/* "$dir"/tmp/*
}

# write NAME DIR ociimage-flags...: DIR as the archive OUT/NAME.tar.
write() {
  local name=$1 dir=$2
  shift 2
  "$ociimage" -rootfs "$dir" -o "$out/$name.tar" "$@"
  log "wrote $out/$name.tar ($(du -h "$out/$name.tar" | cut -f1))"
}

runner() {
  local app=$1 pkgs=$2 dir="$stage/runner-$1"
  debian_rootfs "$dir" "ca-certificates,git,openssh-client${pkgs:+,$pkgs}"
  if [[ $app == terraform ]]; then
    install -m 0755 "$terraform" "$dir/usr/local/bin/terraform"
  fi
  write "runner-$app" "$dir" -name "$registry/bastion-runner-$app:$tag" \
    -user 65532:65532 -workdir /bastion/work -entrypoint /usr/local/bin/bastion-runner -cmd runner
}

# The runner images carry bastion-runner, which must be the runner of the
# bastion given (both from one `make build`), checked before any image is
# written.
runner_bin=${RUNNER_BIN:-$(dirname "$bastion")/bastion-runner}
for img in "${images[@]}"; do
  [[ $img == runner-* ]] || continue
  [[ -x $runner_bin ]] || { echo "no bastion-runner at $runner_bin (make build makes it beside bastion)" >&2; exit 1; }
  want="bastion-runner $("$bastion" version) "
  got=$("$runner_bin" version)
  [[ $got == "$want"* ]] || { echo "$runner_bin answers \"$got\", not the version of $bastion (\"${want% }\"): build both with make build" >&2; exit 1; }
  break
done

for img in "${images[@]}"; do
  case $img in
    pause)
      dir="$stage/pause"
      mkdir -p "$dir"
      # shellcheck source=../lib/k8s-build.sh
      source "$here/../lib/k8s-build.sh"
      src=$(k8s_module_dir "$k8s_version")/build/pause/linux/pause.c
      gcc -Os -static -DVERSION="v$pause_tag-bastion" -o "$dir/pause" "$src"
      strip "$dir/pause"
      write pause "$dir" -name "registry.k8s.io/pause:$pause_tag" -user 65535:65535 -entrypoint /pause
      ;;
    manager)
      # Like distroless/static:nonroot: the binary, CA certificates, a
      # passwd with nonroot 65532, and /tmp.
      dir="$stage/manager"
      install -d -m 0755 "$dir/etc/ssl/certs" "$dir/home/nonroot"
      install -d -m 1777 "$dir/tmp"
      install -m 0644 /etc/ssl/certs/ca-certificates.crt "$dir/etc/ssl/certs/ca-certificates.crt"
      printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$dir/etc/passwd"
      printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' >"$dir/etc/group"
      chown 65532:65532 "$dir/home/nonroot"
      install -m 0755 "$bastion" "$dir/bastion"
      write manager "$dir" -name "$registry/bastion:$tag" -user 65532:65532 -workdir / -entrypoint /bastion -cmd manager
      ;;
    # python3-cffi-backend by name: python3-cryptography depends on the
    # virtual python3-cffi-backend-api-{min,max}, which debootstrap's
    # resolver cannot satisfy by itself (dpkg then refuses to configure).
    runner-ansible) runner ansible python3,ansible-core,python3-cffi-backend,sshpass ;;
    runner-terraform) runner terraform "" ;;
    runner-bash) runner bash bash,curl,jq ;;
    *) echo "unknown image $img" >&2; exit 2 ;;
  esac
done
