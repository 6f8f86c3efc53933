#!/usr/bin/env bash
# Builds bin/karpenter (or $1/karpenter), Karpenter with its KWOK cloud
# provider (the package sigs.k8s.io/karpenter/kwok, how Karpenter tests
# itself: real provisioning and consolidation, nodes that are only Node
# objects), from hack/tools/karpenter/go.mod, a module of its own so that
# Karpenter's Kubernetes dependencies never move the main go.mod. It also
# copies, from the same module version, the CRDs of its KWOK chart into
# bin/karpenter-crds/ (kwok/charts/crds: the core CRDs with the
# karpenter.kwok.sh label domain restricted, as the KWOK provider expects):
#
#   karpenter.sh: NodePool, NodeClaim (watched by the default controllers),
#     NodeOverlay (watched only with the NodeOverlay feature gate)
#   karpenter.kwok.sh: KWOKNodeClass (every NodePool's nodeClassRef)
#   autoscaling.x-k8s.io: CapacityBuffer (only with the CapacityBuffer gate)
#
# The gated ones are installed too, as the chart does, so that turning a
# gate on needs no other step.
#
# Karpenter v1.15.0 needs Go >= 1.26.9; this script alone runs with
# GOTOOLCHAIN=${KARPENTER_GOTOOLCHAIN:-go1.27.3} (the approved toolchain,
# about 76 MB, fetched once from the module proxy); hack/tools/karpenter's
# go.mod says go 1.26.9, so run go commands there with it too. A stamp file
# records the toolchain and Karpenter version; when it matches, the build is
# skipped. A cold build (empty GOCACHE, modules cached) took 158 s on 2 cores.
#
#   hack/install-karpenter.sh            # -> bin/karpenter, bin/karpenter-crds/
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"
OUT=${1:-${ROOT}/bin}
mkdir -p "${OUT}"
OUT=$(cd "${OUT}" && pwd)
BIN=${OUT}/karpenter
CRDS=${OUT}/karpenter-crds

export GOTOOLCHAIN=${KARPENTER_GOTOOLCHAIN:-go1.27.3}
cd hack/tools/karpenter
version=$(go list -m -f '{{.Version}}' sigs.k8s.io/karpenter)
# go list -m prints no Dir for a module not yet in the module cache (a cold
# machine): download it first, or the CRDs are looked for under /kwok/.
go mod download sigs.k8s.io/karpenter
dir=$(go list -m -f '{{.Dir}}' sigs.k8s.io/karpenter)
[[ -n "${dir}" ]] || { echo "sigs.k8s.io/karpenter ${version} is not in the module cache after go mod download" >&2; exit 1; }
want="$(go version) karpenter=${version}"
stamp="${BIN}.stamp"
crds=(
  "${dir}/kwok/charts/crds/karpenter.sh_nodepools.yaml"
  "${dir}/kwok/charts/crds/karpenter.sh_nodeclaims.yaml"
  "${dir}/kwok/charts/crds/karpenter.sh_nodeoverlays.yaml"
  "${dir}/kwok/charts/crds/autoscaling.x-k8s.io_capacitybuffers.yaml"
  "${dir}/kwok/apis/crds/karpenter.kwok.sh_kwoknodeclasses.yaml"
)
up_to_date() {
  [[ -x "${BIN}" && -f "${stamp}" && "$(cat "${stamp}")" == "${want}" ]] || return 1
  for f in "${crds[@]}"; do [[ -f "${CRDS}/$(basename "${f}")" ]] || return 1; done
}
if up_to_date; then
  echo "bin/karpenter is up to date (${want})"
  exit 0
fi

echo "building karpenter ${version} (KWOK provider) into ${OUT} from hack/tools/karpenter/go.mod; a cold build takes about 3 minutes"
rm -f "${stamp}"
start=${SECONDS}
# The version Karpenter logs at start and reports in karpenter_build_info.
go build -ldflags "-X sigs.k8s.io/karpenter/pkg/operator.Version=${version}" -o "${BIN}" sigs.k8s.io/karpenter/kwok
echo "built karpenter in $((SECONDS - start)) s"

rm -rf "${CRDS}"
mkdir -p "${CRDS}"
# The module cache is read-only: the copies must be writable for the next
# run's rm -rf.
for f in "${crds[@]}"; do install -m 0644 "${f}" "${CRDS}/"; done
echo "${want}" > "${stamp}"
