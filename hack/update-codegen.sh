#!/usr/bin/env bash
# Regenerates deepcopy, defaulter and conversion code for the args APIs, the
# deepcopy and the typed clientset, listers and informers of the
# scheduling.adminsched.io API, and its CRD, with the generators pinned in
# go.mod, go.1.35.mod and hack/tools/go.mod (`go tool`), so every machine produces the same
# output without installing anything.
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"

MODULE=$(go list -m)
BOILERPLATE="${ROOT}/hack/boilerplate.go.txt"
INTERNAL="${MODULE}/apis/config"
V1="${MODULE}/apis/config/v1"
SCHEDULING="${MODULE}/apis/scheduling/v1alpha1"

rm -f apis/config/zz_generated.deepcopy.go apis/config/v1/zz_generated.*.go \
  apis/scheduling/v1alpha1/zz_generated.*.go

go tool deepcopy-gen --go-header-file "${BOILERPLATE}" \
  --output-file zz_generated.deepcopy.go "${INTERNAL}" "${V1}" "${SCHEDULING}"
go tool defaulter-gen --go-header-file "${BOILERPLATE}" \
  --output-file zz_generated.defaults.go "${V1}"
go tool conversion-gen --go-header-file "${BOILERPLATE}" \
  --output-file zz_generated.conversion.go "${V1}"

# The typed clients of the scheduling API, in the layout of k8s.io/client-go
# (clientset/versioned, listers/<group>/<version>, informers/externalversions),
# which the quota plugin and controller import on every supported minor. The
# generators are those of the oldest minor (go.1.35.mod): client-go keeps
# compiling older generated code, not newer, and 1.37's emit
# discovery.DiscoveryInterfaces, cache.TypedSharedIndexInformer and
# cache.InformerName, which client-go 0.35 and 0.36 lack (no flag turns them
# off). Without --apply-configuration-package client-gen emits no Apply
# methods, so no applyconfiguration package is needed. Everything under
# pkg/generated is generated: removing it first drops the files of a removed type.
GENERATED=pkg/generated
OLDEST=(-modfile=go.1.35.mod)
rm -rf "${GENERATED}"
go tool "${OLDEST[@]}" client-gen --go-header-file "${BOILERPLATE}" \
  --output-dir "${GENERATED}/clientset" --output-pkg "${MODULE}/${GENERATED}/clientset" \
  --clientset-name versioned --input-base "${MODULE}/apis" --input scheduling/v1alpha1
go tool "${OLDEST[@]}" lister-gen --go-header-file "${BOILERPLATE}" \
  --output-dir "${GENERATED}/listers" --output-pkg "${MODULE}/${GENERATED}/listers" \
  "${SCHEDULING}"
go tool "${OLDEST[@]}" informer-gen --go-header-file "${BOILERPLATE}" \
  --output-dir "${GENERATED}/informers" --output-pkg "${MODULE}/${GENERATED}/informers" \
  --versioned-clientset-package "${MODULE}/${GENERATED}/clientset/versioned" \
  --listers-package "${MODULE}/${GENERATED}/listers" \
  "${SCHEDULING}"

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

"${ROOT}/hack/update-crds.sh"

echo "generated code is up to date in apis/config, apis/config/v1, apis/scheduling/v1alpha1, pkg/generated, descheduler/pkg/policyevictor and manifests/crds"
