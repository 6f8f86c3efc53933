#!/usr/bin/env bash
# Fails when the generated code in apis/ differs from what hack/update-codegen.sh
# produces now. It generates into a copy of the tree, so the checkout is untouched.
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "${TMP}"' EXIT

# Copy what generation reads: the module files, the scripts and the APIs.
cp "${ROOT}/go.mod" "${ROOT}/go.sum" "${TMP}/"
cp -r "${ROOT}/hack" "${ROOT}/apis" "${TMP}/"
"${TMP}/hack/update-codegen.sh" >/dev/null

if ! diff -Naupr "${ROOT}/apis" "${TMP}/apis"; then
  echo "generated code in apis/ is stale: run hack/update-codegen.sh (make update-codegen) and commit the result" >&2
  exit 1
fi
echo "generated code is up to date"
