#!/usr/bin/env bash
# Builds bin/helm (or $1/helm) from hack/tools/helm/go.mod, a module of its
# own so that Helm's dependencies never move the main go.mod. Nothing is
# downloaded from outside the Go module proxy. A stamp file records the Go
# and Helm versions it was built from; when it matches, the build is skipped.
# A cold build takes a few minutes.
#
#   hack/install-helm.sh            # -> bin/helm
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"
OUT=${1:-${ROOT}/bin}
mkdir -p "${OUT}"
OUT=$(cd "${OUT}" && pwd)
BIN=${OUT}/helm

version=$(cd hack/tools/helm && go list -m -f '{{.Version}}' helm.sh/helm/v3)
# The Kubernetes version `helm template` and `helm lint` assume without a
# cluster (Capabilities.KubeVersion, kubeVersion constraints, deprecated
# APIs) is set at link time, as Helm's own Makefile does, from the
# client-go Helm is built with (v0.35.x -> 1.35); unset it is 1.20.
k8s_minor=$(cd hack/tools/helm && go list -m -f '{{.Version}}' k8s.io/client-go | cut -d. -f2)
want="$(go version) helm=${version} kube=1.${k8s_minor}"
stamp="${BIN}.stamp"
if [[ -x "${BIN}" && -f "${stamp}" && "$(cat "${stamp}")" == "${want}" ]]; then
  echo "bin/helm is up to date (${want})"
  exit 0
fi

echo "building helm ${version} into ${OUT} from hack/tools/helm/go.mod; a cold build takes a few minutes"
rm -f "${stamp}"
ldflags="-X helm.sh/helm/v3/internal/version.version=${version}"
for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
  ldflags+=" -X ${pkg}.k8sVersionMajor=1 -X ${pkg}.k8sVersionMinor=${k8s_minor}"
done
(cd hack/tools/helm && go build -ldflags "${ldflags}" -o "${BIN}" helm.sh/helm/v3/cmd/helm)
"${BIN}" version --short
echo "${want}" > "${stamp}"
