#!/usr/bin/env bash
# Fails when `go mod tidy` would change go.mod or go.sum of the main module
# or of a tools module (hack/tools: logcheck; hack/tools/helm: helm; hack/tools/kwok: kwok).
set -o errexit -o nounset -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
for mod in . hack/tools hack/tools/helm hack/tools/kwok; do
  (cd "${mod}" && go mod tidy -diff) || { echo "${mod}/go.mod, go.sum are not tidy: run go mod tidy in ${mod} and commit the result" >&2; exit 1; }
done
echo "go.mod and go.sum are tidy (main module, hack/tools, hack/tools/helm, hack/tools/kwok)"
