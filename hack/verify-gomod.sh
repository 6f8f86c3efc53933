#!/usr/bin/env bash
# Fails when `go mod tidy` would change go.mod or go.sum of the main module
# or of a tools module (hack/tools: logcheck; hack/tools/helm: helm;
# hack/tools/kwok: kwok; hack/tools/karpenter: Karpenter, whose go.mod needs
# Go >= 1.26.9 and so runs with the toolchain hack/install-karpenter.sh uses).
set -o errexit -o nounset -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tidy() {
  (cd "$1" && go mod tidy -diff) || { echo "$1/go.mod, go.sum are not tidy: run go mod tidy in $1 and commit the result" >&2; exit 1; }
}
for mod in . hack/tools hack/tools/helm hack/tools/kwok; do
  tidy "${mod}"
done
GOTOOLCHAIN=${KARPENTER_GOTOOLCHAIN:-go1.27.3} tidy hack/tools/karpenter
echo "go.mod and go.sum are tidy (main module, hack/tools, hack/tools/helm, hack/tools/kwok, hack/tools/karpenter)"
