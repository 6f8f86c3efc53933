#!/usr/bin/env bash
# Builds the scheduler image from build/scheduler/Dockerfile (FROM scratch)
# without needing a Docker engine, and writes OCI archives:
#
#   _output/image/kube-scheduler-<VERSION>-<os>-<arch>.oci.tar   one per platform
#   _output/image/kube-scheduler-<VERSION>.oci.tar               all platforms (an image index)
#
# For each platform in IMAGE_PLATFORMS the binary is cross-compiled on this
# machine (CGO_ENABLED=0, -trimpath, LDFLAGS), and a root filesystem is
# assembled beside it (see rootfs() and build/README.md). Nothing runs inside
# the image, so no emulation is needed. The tool is IMAGE_TOOL, or the first
# of: docker (when `docker info` answers), buildah, podman, buildah installed
# by hack/install-buildah.sh. Where the tool keeps images, the host
# platform's image is tagged $IMAGE and each platform's $IMAGE-<arch>; the
# images of earlier runs are removed from there (see prune).
#
#   hack/build-image.sh          # rootfs, image, archives (what `make image` runs)
#   hack/build-image.sh rootfs   # only the binaries and _output/image/context
#
# The Makefile sets VERSION, GIT_COMMIT, K8S_VERSION, LDFLAGS, BUILD_DATE,
# MINOR_FLAGS (-modfile and -tags of an older KUBE_MINOR, else empty) and
# SOURCE_DATE_EPOCH (the commit's time unless set: every file in the image and
# the image's creation time carry it, so one commit gives the same layers).
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"

GO=${GO:-go}
VERSION=${VERSION:?VERSION must be set (the Makefile sets it)}
GIT_COMMIT=${GIT_COMMIT:?GIT_COMMIT must be set}
K8S_VERSION=${K8S_VERSION:?K8S_VERSION must be set}
LDFLAGS=${LDFLAGS:?LDFLAGS must be set}
read -r -a minor_flags <<<"${MINOR_FLAGS:-}"
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:?SOURCE_DATE_EPOCH must be set (seconds since 1970)}
BUILD_DATE=${BUILD_DATE:-$(date -u -d "@${SOURCE_DATE_EPOCH}" +%Y-%m-%dT%H:%M:%SZ)}
IMAGE=${IMAGE:-adminsched/kube-scheduler:${VERSION}}
IMAGE_PLATFORMS=${IMAGE_PLATFORMS:-linux/amd64 linux/arm64}
IMAGE_DIR=${IMAGE_DIR:-${ROOT}/_output/image}
IMAGE_TOOL=${IMAGE_TOOL:-}
# The CA bundle is the ca-certificates package's own certificates, not the
# build machine's /etc/ssl/certs, which may hold locally added authorities.
CA_DIR=${CA_DIR:-/usr/share/ca-certificates/mozilla}

if [[ ! "${SOURCE_DATE_EPOCH}" =~ ^[0-9]+$ ]]; then
  echo "build-image.sh: SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH}: want seconds since 1970" >&2
  exit 1
fi
for p in ${IMAGE_PLATFORMS}; do
  if [[ ! "${p}" =~ ^linux/(amd64|arm64|arm|ppc64le|s390x|riscv64)$ ]]; then
    echo "build-image.sh: IMAGE_PLATFORMS entry ${p}: want linux/<arch>, arch one of amd64 arm64 arm ppc64le s390x riscv64" >&2
    exit 1
  fi
done

CONTEXT=${IMAGE_DIR}/context
host_platform="linux/$(${GO} env GOHOSTARCH)"

# rootfs builds the binaries and lays out the build context:
# rootfs/<os>_<arch>/ per platform and home/nonroot/ (copied with nonroot as
# owner). Modes are set here (COPY keeps them); owners are root's.
rootfs() {
  rm -rf "${CONTEXT}"
  install -d -m 0700 "${CONTEXT}/home/nonroot"
  local p os arch fs ca_version
  if ! compgen -G "${CA_DIR}/*.crt" >/dev/null; then
    echo "build-image.sh: no certificates in ${CA_DIR}: install ca-certificates (hack/install-buildah.sh does)" >&2
    exit 1
  fi
  ca_version=$(dpkg-query -W -f='${Version}' ca-certificates 2>/dev/null || echo unknown)
  echo "${ca_version}" > "${IMAGE_DIR}/ca-certificates.version"
  for p in ${IMAGE_PLATFORMS}; do
    os=${p%/*} arch=${p#*/}
    echo "building kube-scheduler for ${p}"
    install -d "${IMAGE_DIR}/bin/${os}_${arch}"
    CGO_ENABLED=0 GOOS=${os} GOARCH=${arch} ${GO} build "${minor_flags[@]}" -trimpath -ldflags "${LDFLAGS}" \
      -o "${IMAGE_DIR}/bin/${os}_${arch}/kube-scheduler" ./cmd/scheduler

    fs=${CONTEXT}/rootfs/${os}_${arch}
    install -d -m 0755 "${fs}/etc/ssl/certs" "${fs}/home" "${fs}/usr/share/doc/ca-certificates"
    install -d -m 0700 "${fs}/root"
    install -d -m 1777 "${fs}/tmp"
    install -m 0755 "${IMAGE_DIR}/bin/${os}_${arch}/kube-scheduler" "${fs}/kube-scheduler"
    # The accounts distroless/static has; nonroot is the one the image runs as.
    printf '%s\n' \
      'root:x:0:0:root:/root:/sbin/nologin' \
      'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin' \
      'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin' > "${fs}/etc/passwd"
    printf '%s\n' 'root:x:0:' 'nobody:x:65534:' 'nonroot:x:65532:' > "${fs}/etc/group"
    # Go's resolver reads it: /etc/hosts before DNS, as glibc does.
    printf '%s\n' 'hosts: files dns' > "${fs}/etc/nsswitch.conf"
    # Sorted by name (LC_ALL=C) so that the bundle does not depend on the
    # file system's order; Go's crypto/x509 reads this path first on Linux.
    (LC_ALL=C; for crt in "${CA_DIR}"/*.crt; do cat "${crt}"; done) > "${fs}/etc/ssl/certs/ca-certificates.crt"
    chmod 0644 "${fs}"/etc/passwd "${fs}"/etc/group "${fs}"/etc/nsswitch.conf "${fs}/etc/ssl/certs/ca-certificates.crt"
    install -m 0644 /usr/share/doc/ca-certificates/copyright "${fs}/usr/share/doc/ca-certificates/copyright"
  done
  # Fixed times: the layers then depend only on the content.
  find "${CONTEXT}" -exec touch -h -d "@${SOURCE_DATE_EPOCH}" {} +
}

pick_tool() {
  if [[ -n "${IMAGE_TOOL}" ]]; then
    case "${IMAGE_TOOL}" in
      docker|podman|buildah) ;;
      *) echo "build-image.sh: IMAGE_TOOL=${IMAGE_TOOL}: want docker, podman or buildah" >&2; exit 1 ;;
    esac
    if [[ "${IMAGE_TOOL}" == buildah ]] && ! command -v buildah >/dev/null 2>&1; then
      hack/install-buildah.sh
    fi
    echo "${IMAGE_TOOL}"
    return
  fi
  if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
    echo docker
  elif command -v buildah >/dev/null 2>&1; then
    echo buildah
  elif command -v podman >/dev/null 2>&1; then
    echo podman
  else
    hack/install-buildah.sh >&2
    echo buildah
  fi
}

build_args() {
  local a
  for a in VERSION="${VERSION}" GIT_COMMIT="${GIT_COMMIT}" BUILD_DATE="${BUILD_DATE}" \
    K8S_VERSION="${K8S_VERSION}" CA_CERTIFICATES_VERSION="$(cat "${IMAGE_DIR}/ca-certificates.version")"; do
    printf -- '--build-arg\n%s\n' "${a}"
  done
}

# prune removes the images earlier runs of this script left in the tool's
# storage (they carry the kubernetes-version label), so that local storage
# holds one build, not one per commit (CI builds on the same machine again
# and again). The archives are what to keep.
prune() {
  local tool=$1 ids
  ids=$("${tool}" images --quiet --filter label=io.github.adminsched.kubernetes-version 2>/dev/null | sort -u || true)
  if [[ -n "${ids}" ]]; then
    # shellcheck disable=SC2086 # one ID a word
    "${tool}" rmi -f ${ids} >/dev/null 2>&1 || true
  fi
}

archive_name() { # platform or "" for the multi-platform archive
  if [[ -z "$1" ]]; then
    echo "${IMAGE_DIR}/kube-scheduler-${VERSION}.oci.tar"
  else
    echo "${IMAGE_DIR}/kube-scheduler-${VERSION}-${1%/*}-${1#*/}.oci.tar"
  fi
}

# buildah and podman take the same build, push and manifest commands.
build_containers() {
  local tool=$1 p arch out id list=${IMAGE}-index
  local -a args
  mapfile -t args < <(build_args)
  prune "${tool}"
  "${tool}" manifest rm "${list}" >/dev/null 2>&1 || true
  "${tool}" manifest create "${list}" >/dev/null
  for p in ${IMAGE_PLATFORMS}; do
    arch=${p#*/}
    out=$(archive_name "${p}")
    # By ID from here on: a short name is localhost/... in storage, but
    # docker.io/... in a containers-storage: reference.
    "${tool}" build --quiet --platform "${p}" --format oci --timestamp "${SOURCE_DATE_EPOCH}" \
      "${args[@]}" -f build/scheduler/Dockerfile -t "${IMAGE}-${arch}" --iidfile "${IMAGE_DIR}/iid" \
      "${CONTEXT}" >/dev/null
    id=$(cat "${IMAGE_DIR}/iid")
    id=${id#sha256:}
    [[ "${p}" == "${host_platform}" ]] && "${tool}" tag "${id}" "${IMAGE}"
    rm -f "${out}"
    "${tool}" push --quiet "${id}" "oci-archive:${out}:${IMAGE}"
    "${tool}" manifest add "${list}" "containers-storage:${id}" >/dev/null
    echo "wrote ${out}"
  done
  out=$(archive_name "")
  rm -f "${out}"
  "${tool}" manifest push --quiet --all "${list}" "oci-archive:${out}:${IMAGE}"
  # The list was only the way to the archive.
  "${tool}" manifest rm "${list}" >/dev/null
  echo "wrote ${out}"
}

# Not tried here (no Docker engine on these machines): docker save writes an
# OCI layout from Docker 25 on; the multi-platform archive needs a buildx
# builder that exports OCI (docker-container driver or the containerd store).
build_docker() {
  local p arch out
  local -a args
  mapfile -t args < <(build_args)
  prune docker
  for p in ${IMAGE_PLATFORMS}; do
    arch=${p#*/}
    out=$(archive_name "${p}")
    docker build --platform "${p}" "${args[@]}" -f build/scheduler/Dockerfile -t "${IMAGE}-${arch}" "${CONTEXT}"
    [[ "${p}" == "${host_platform}" ]] && docker tag "${IMAGE}-${arch}" "${IMAGE}"
    rm -f "${out}"
    docker save -o "${out}" "${IMAGE}-${arch}"
    echo "wrote ${out}"
  done
  out=$(archive_name "")
  rm -f "${out}"
  docker buildx build --platform "$(echo "${IMAGE_PLATFORMS}" | xargs | tr ' ' ',')" "${args[@]}" \
    -f build/scheduler/Dockerfile --output "type=oci,dest=${out},name=${IMAGE}" "${CONTEXT}"
  echo "wrote ${out}"
}

mkdir -p "${IMAGE_DIR}"
rootfs
if [[ "${1:-}" == rootfs ]]; then
  exit 0
fi
tool=$(pick_tool)
# Archives of earlier versions too: _output/image holds one build.
rm -f "${IMAGE_DIR}"/kube-scheduler-*.oci.tar
echo "building ${IMAGE} for ${IMAGE_PLATFORMS} with ${tool}"
case "${tool}" in
  docker) build_docker ;;
  *) build_containers "${tool}" ;;
esac
