#!/usr/bin/env bash
# Fails when the generated code in apis/, pkg/generated, descheduler/pkg/policyevictor or
# the CRDs in manifests/crds differ from what hack/update-codegen.sh
# produces now. It generates into a copy of the tree, so the checkout is untouched.
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "${TMP}"' EXIT

# Copy what generation reads: the module files (go.1.35.mod pins the client
# generators), the scripts and the APIs,
# the nested descheduler module, whose go.mod replaces ../ (the copy), and
# the CRDs with their kustomization.
cp "${ROOT}/go.mod" "${ROOT}/go.sum" "${ROOT}/go.1.35.mod" "${ROOT}/go.1.35.sum" "${TMP}/"
cp -r "${ROOT}/hack" "${ROOT}/apis" "${ROOT}/pkg" "${TMP}/"
mkdir -p "${TMP}/descheduler/pkg"
cp "${ROOT}/descheduler/go.mod" "${ROOT}/descheduler/go.sum" "${TMP}/descheduler/"
cp -r "${ROOT}/descheduler/pkg/policyevictor" "${TMP}/descheduler/pkg/"
mkdir -p "${TMP}/manifests"
cp -r "${ROOT}/manifests/crds" "${TMP}/manifests/"
"${TMP}/hack/update-codegen.sh" >/dev/null

for dir in apis pkg/generated descheduler/pkg/policyevictor manifests/crds; do
  if ! diff -Naupr "${ROOT}/${dir}" "${TMP}/${dir}"; then
    echo "generated code in ${dir}/ is stale: run hack/update-codegen.sh (make update-codegen) and commit the result" >&2
    exit 1
  fi
done
echo "generated code is up to date"
