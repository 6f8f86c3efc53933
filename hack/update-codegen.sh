#!/usr/bin/env bash
# Regenerates deepcopy, defaulter and conversion code for the args APIs with the
# code-generator tools pinned in go.mod (`go tool`), so every machine produces
# the same output without installing anything.
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"

MODULE=$(go list -m)
BOILERPLATE="${ROOT}/hack/boilerplate.go.txt"
INTERNAL="${MODULE}/apis/config"
V1="${MODULE}/apis/config/v1"

rm -f apis/config/zz_generated.deepcopy.go apis/config/v1/zz_generated.*.go

go tool deepcopy-gen --go-header-file "${BOILERPLATE}" \
  --output-file zz_generated.deepcopy.go "${INTERNAL}" "${V1}"
go tool defaulter-gen --go-header-file "${BOILERPLATE}" \
  --output-file zz_generated.defaults.go "${V1}"
go tool conversion-gen --go-header-file "${BOILERPLATE}" \
  --output-file zz_generated.conversion.go "${V1}"

echo "generated code is up to date in apis/config and apis/config/v1"
