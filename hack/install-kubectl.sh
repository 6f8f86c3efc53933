#!/usr/bin/env bash
# Builds bin/kubectl (or $1/kubectl) from the k8s.io/kubernetes that go.mod
# pins, for trying the playground's cluster by hand (bin/playground --keep)
# on a machine without kubectl. As for kube-controller-manager in
# install-envtest.sh, it is built against a temporary copy of go.mod and
# go.sum, so the pins are go.mod's and neither file changes. Skipped when
# the stamp matches.
#
#   hack/install-kubectl.sh            # -> bin/kubectl
#   MODFILE=go.1.36.mod hack/install-kubectl.sh bin/1.36   # another minor's
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"
OUT=${1:-${ROOT}/bin}
mkdir -p "${OUT}"
OUT=$(cd "${OUT}" && pwd)
BIN=${OUT}/kubectl
MODFILE=${MODFILE:-go.mod}
[[ -f "${MODFILE}" ]] || { echo "MODFILE=${MODFILE}: no such module file in ${ROOT}" >&2; exit 1; }

k8s=$(go list -modfile="${ROOT}/${MODFILE}" -m -f '{{.Version}}' k8s.io/kubernetes)
want="$(go version) kubernetes=${k8s}"
stamp="${BIN}.stamp"
if [[ -x "${BIN}" && -f "${stamp}" && "$(cat "${stamp}")" == "${want}" ]]; then
  echo "${BIN} is up to date (${want})"
  exit 0
fi

echo "building kubectl ${k8s} into ${OUT}; a cold build takes a few minutes"
rm -f "${stamp}"
tmp=$(mktemp -d)
trap 'rm -rf "${tmp}"' EXIT
cp "${MODFILE}" "${tmp}/go.mod"
cp "${MODFILE%.mod}.sum" "${tmp}/go.sum"
start=${SECONDS}
go build -modfile="${tmp}/go.mod" -mod=mod \
  -ldflags "-X k8s.io/client-go/pkg/version.gitVersion=${k8s} -X k8s.io/component-base/version.gitVersion=${k8s}" \
  -o "${BIN}" k8s.io/kubernetes/cmd/kubectl
if ! cmp -s "${MODFILE}" "${tmp}/go.mod"; then
  diff "${MODFILE}" "${tmp}/go.mod" >&2 || true
  echo "building kubectl changed the requirements of ${MODFILE} (above); refusing the binary" >&2
  rm -f "${BIN}"
  exit 1
fi
echo "built kubectl in $((SECONDS - start)) s"
"${BIN}" version --client
echo "${want}" > "${stamp}"
