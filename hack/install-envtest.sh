#!/usr/bin/env bash
# Builds the control-plane binaries of the embedded cluster into bin/ (or $1),
# from Go modules only (nothing is downloaded from outside the module proxy):
#
#   etcd, kube-apiserver, kube-controller-manager  from the versions go.mod pins
#   kwok (simulated kubelets)                      from hack/tools/kwok/go.mod
#
# kube-controller-manager needs go.sum entries for modules that nothing in
# this repo imports (the kubelet's, through the volume controllers), so it is
# built against a temporary copy of go.mod and go.sum: the pins are go.mod's,
# and go.mod/go.sum stay as they are. kwok has a module of its own so that
# its Kubernetes dependencies never move ours.
#
# A stamp file records what the binaries were built from; when it matches,
# the build is skipped. A cold build takes about 10 minutes on 2 cores.
#
#   hack/install-envtest.sh            # -> bin/etcd, bin/kube-apiserver, ...
#   export KUBEBUILDER_ASSETS=$PWD/bin # how envtest finds them
#   MODFILE=go.1.36.mod hack/install-envtest.sh bin/1.36   # another minor's
#
# MODFILE is the module file whose pins the binaries are built from (default
# go.mod; go.<minor>.mod for an older Kubernetes minor, see README.md).
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"
OUT=${1:-${ROOT}/bin}
mkdir -p "${OUT}"
OUT=$(cd "${OUT}" && pwd)
MODFILE=${MODFILE:-go.mod}
[[ -f "${MODFILE}" ]] || { echo "MODFILE=${MODFILE}: no such module file in ${ROOT}" >&2; exit 1; }
mod=(-modfile="${ROOT}/${MODFILE}")

k8s=$(go list "${mod[@]}" -m -f '{{.Version}}' k8s.io/kubernetes)
kwok=$(cd hack/tools/kwok && go list -m -f '{{.Version}}' sigs.k8s.io/kwok)
want="$(go version) etcd=$(go list "${mod[@]}" -m -f '{{.Version}}' go.etcd.io/etcd/server/v3) kubernetes=${k8s} kwok=${kwok}"
stamp="${OUT}/.envtest-stamp"
bins=(etcd kube-apiserver kube-controller-manager kwok)
up_to_date() {
  [[ -f "${stamp}" && "$(cat "${stamp}")" == "${want}" ]] || return 1
  for b in "${bins[@]}"; do [[ -x "${OUT}/${b}" ]] || return 1; done
}
if up_to_date; then
  echo "control-plane binaries in ${OUT} are up to date (${want})"
  exit 0
fi

echo "building ${bins[*]} into ${OUT} (${want}); a cold build takes about 10 minutes"
rm -f "${stamp}"
# The version the binaries report (--version, /version); unset, kube-apiserver
# and kube-controller-manager say v0.0.0-master.
ldflags="-X k8s.io/component-base/version.gitVersion=${k8s} -X k8s.io/client-go/pkg/version.gitVersion=${k8s}"
# Each build says how long it took: what a cold cache costs, per binary.
timed() { local name=$1 start=${SECONDS}; shift; "$@"; echo "built ${name} in $((SECONDS - start)) s"; }
timed etcd go build "${mod[@]}" -o "${OUT}/etcd" go.etcd.io/etcd/server/v3
timed kube-apiserver go build "${mod[@]}" -ldflags "${ldflags}" -o "${OUT}/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver

tmp=$(mktemp -d)
trap 'rm -rf "${tmp}"' EXIT
cp "${MODFILE}" "${tmp}/go.mod"
cp "${MODFILE%.mod}.sum" "${tmp}/go.sum"
timed kube-controller-manager go build -modfile="${tmp}/go.mod" -mod=mod -ldflags "${ldflags}" \
  -o "${OUT}/kube-controller-manager" k8s.io/kubernetes/cmd/kube-controller-manager
# -mod=mod may only add go.sum entries: a changed requirement would mean the
# controller-manager was not built from go.mod's pins.
if ! cmp -s "${MODFILE}" "${tmp}/go.mod"; then
  diff "${MODFILE}" "${tmp}/go.mod" >&2 || true
  echo "building kube-controller-manager changed the requirements of ${MODFILE} (above); refusing the binary" >&2
  rm -f "${OUT}/kube-controller-manager"
  exit 1
fi

(cd hack/tools/kwok && timed kwok go build -o "${OUT}/kwok" sigs.k8s.io/kwok/cmd/kwok)

# Print the versions as a check that every binary runs (no pipe: with
# pipefail, a reader that quits early would fail the script).
"${OUT}/etcd" --version
"${OUT}/kube-apiserver" --version
"${OUT}/kube-controller-manager" --version
"${OUT}/kwok" --version
echo "${want}" > "${stamp}"
