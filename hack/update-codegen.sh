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

# The descheduler plugin's args live in the nested module: the same pinned
# generators, built from this module, load its package from inside it.
BIN=$(mktemp -d)
trap 'rm -rf "${BIN}"' EXIT
go build -o "${BIN}/" k8s.io/code-generator/cmd/deepcopy-gen k8s.io/code-generator/cmd/defaulter-gen
EVICTOR=./pkg/policyevictor
rm -f descheduler/pkg/policyevictor/zz_generated.*.go
(
  cd descheduler
  "${BIN}/deepcopy-gen" --go-header-file "${BOILERPLATE}" \
    --output-file zz_generated.deepcopy.go "${EVICTOR}"
  "${BIN}/defaulter-gen" --go-header-file "${BOILERPLATE}" \
    --output-file zz_generated.defaults.go "${EVICTOR}"
)

echo "generated code is up to date in apis/config, apis/config/v1 and descheduler/pkg/policyevictor"
