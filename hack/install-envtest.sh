#!/usr/bin/env bash
# Builds the control-plane binaries that envtest needs (etcd, kube-apiserver)
# from the Go modules pinned in go.mod, into bin/ (or $1). Nothing is
# downloaded from outside the Go module proxy. A stamp file records what the
# binaries were built from; when it matches, the build is skipped.
#
#   hack/install-envtest.sh            # -> bin/etcd, bin/kube-apiserver
#   export KUBEBUILDER_ASSETS=$PWD/bin # how envtest finds them
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"
OUT=${1:-${ROOT}/bin}
mkdir -p "${OUT}"

ETCD_PKG=go.etcd.io/etcd/server/v3
APISERVER_PKG=k8s.io/kubernetes/cmd/kube-apiserver

want="$(go version) etcd=$(go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3) kubernetes=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)"
stamp="${OUT}/.envtest-stamp"
if [[ -x "${OUT}/etcd" && -x "${OUT}/kube-apiserver" && -f "${stamp}" && "$(cat "${stamp}")" == "${want}" ]]; then
  echo "envtest binaries in ${OUT} are up to date (${want})"
  exit 0
fi

echo "building etcd and kube-apiserver into ${OUT} (${want}); a cold build takes a few minutes"
rm -f "${stamp}"
go build -o "${OUT}/etcd" "${ETCD_PKG}"
go build -o "${OUT}/kube-apiserver" "${APISERVER_PKG}"
# Print the versions as a check that both binaries run (no pipe: with
# pipefail, a reader that quits early would fail the script).
"${OUT}/etcd" --version
"${OUT}/kube-apiserver" --version
echo "${want}" > "${stamp}"
