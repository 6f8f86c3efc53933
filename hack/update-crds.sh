#!/usr/bin/env bash
# Regenerates the CRDs in manifests/crds from the kubebuilder markers of the
# scheduling.adminsched.io API with controller-gen, pinned in hack/tools/go.mod
# so that its dependencies stay out of the main module's graph.
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"

BIN=$(mktemp -d)
trap 'rm -rf "${BIN}"' EXIT
# Built from hack/tools, run from here: it loads the API packages of this module.
go build -C hack/tools -o "${BIN}/" sigs.k8s.io/controller-tools/cmd/controller-gen

CRDS=manifests/crds
rm -f "${CRDS}"/scheduling.adminsched.io_*.yaml
"${BIN}/controller-gen" crd paths=./apis/scheduling/v1alpha1 output:crd:dir="${CRDS}"

# The chart's copy: Helm installs crds/ before the templates.
# test/integration TestChartCRDsMatchManifests holds it identical.
CHART_CRDS=manifests/install/charts/adminsched-scheduler/crds
rm -f "${CHART_CRDS}"/scheduling.adminsched.io_*.yaml
mkdir -p "${CHART_CRDS}"
cp "${CRDS}"/scheduling.adminsched.io_*.yaml "${CHART_CRDS}/"
