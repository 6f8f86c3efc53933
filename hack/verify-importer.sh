#!/usr/bin/env bash
# Builds a scheduler of the kind a platform team builds: a module of its own
# that imports our plugins into the stock kube-scheduler command of a
# Kubernetes minor (README.md, "Import the plugins into your own scheduler
# build"), against a release tree (hack/release-minor.sh). It fails if the
# build fails or if resolving the module graph moved k8s.io/kubernetes off
# the tree's version.
#
#   hack/verify-importer.sh _output/release-1.36/tree   # -> _output/importer-1.36/
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TREE=$(cd "${1:?usage: hack/verify-importer.sh <release tree>}" && pwd)
k8s=$(cd "${TREE}" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
minor=$(sed -E 's/^v(1\.[0-9]+)\..*/\1/' <<<"${k8s}")
OUT=${OUT:-${ROOT}/_output/importer-${minor}}
rm -rf "${OUT}"
mkdir -p "${OUT}"
cd "${OUT}"

cat >main.go <<'GO'
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow"
	"github.com/adminsched/scheduler-plugins/pkg/nodelesspods"
	"github.com/adminsched/scheduler-plugins/pkg/placementpolicy"
)

func main() {
	cmd := app.NewSchedulerCommand(
		app.WithPlugin(nodelesspods.Name, nodelesspods.New),
		app.WithPlugin(placementpolicy.Name, placementpolicy.New),
		app.WithPlugin(maintenancewindow.Name, maintenancewindow.New),
	)
	os.Exit(cli.Run(cmd))
}
GO
# As the README says: require k8s.io/kubernetes and each staging module at
# the tree's versions (the module proxy serves no v0.0.0), then tidy.
go mod init example.com/importer >/dev/null 2>&1
go mod edit -require="github.com/adminsched/scheduler-plugins@v0.${minor#1.}.0" -replace="github.com/adminsched/scheduler-plugins=${TREE}"
# Those go.mod requires, direct and indirect: the whole graph's would pull
# in modules whose own go.mod requires staging modules at v0.0.0.
awk '$1 ~ /^k8s\.io\// && $2 ~ /^v/ {print $1 "@" $2}' "${TREE}/go.mod" |
  while read -r req; do go mod edit -require="${req}"; done
GOFLAGS=-mod=mod go mod tidy
got=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)
if [[ "${got}" != "${k8s}" ]]; then
  echo "the importer's k8s.io/kubernetes is ${got}, the release tree's ${k8s}: resolving the graph moved it" >&2
  exit 1
fi
go build -o importer .
help=$(./importer --help)
grep -q -- '--config' <<<"${help}" || { echo "the importer's scheduler does not run" >&2; exit 1; }
echo "an importer module built a ${k8s} kube-scheduler with our plugins: ${OUT}/importer"
