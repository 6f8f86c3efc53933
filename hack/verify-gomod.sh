#!/usr/bin/env bash
# Fails when `go mod tidy` would change go.mod or go.sum of the main module
# or of a tools module (hack/tools: logcheck; hack/tools/helm: helm;
# hack/tools/kwok: kwok; descheduler: our descheduler build;
# hack/tools/karpenter: Karpenter, whose go.mod needs
# Go >= 1.26.9 and so runs with the toolchain hack/install-karpenter.sh uses).
set -o errexit -o nounset -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tidy() {
  (cd "$1" && go mod tidy -diff) || { echo "$1/go.mod, go.sum are not tidy: run go mod tidy in $1 and commit the result" >&2; exit 1; }
}
# The main module, and the descheduler module that imports its packages: go
# mod tidy reads the files of every build tag at once, so the imports of an
# older minor's files (tag kube1.<m>, go.1.<m>.mod) of packages that only its
# modules have cannot resolve against go.mod. tidy -e reports those and goes
# on; any other error, or any change, fails.
tidy_tagged() {
  local errs older line pkg
  if ! errs=$(cd "$1" && go mod tidy -e -diff 2>&1); then
    echo "${errs}" >&2
    echo "$1/go.mod, go.sum are not tidy: run go mod tidy -e in $1 and commit the result" >&2
    exit 1
  fi
  older=$(for m in go.1.*.mod; do
    tag=${m#go.}
    go list -modfile="${m}" -tags "kube${tag%.mod}" -deps -test -f '{{.ImportPath}}' ./...
  done | sort -u)
  while IFS= read -r line; do
    [[ -z "${line}" || "${line}" =~ ^go:\ finding\ module\ for\ package\  || "${line}" =~ ^(go:\ |$'\t')[^\ ]+\ (imports|tested\ by)$ ]] && continue
    if [[ "${line}" =~ does\ not\ contain\ package\ ([^\ ]+)$ ]]; then
      pkg=${BASH_REMATCH[1]}
      grep -qxF "${pkg}" <<<"${older}" && continue
    fi
    echo "${errs}" >&2
    echo "go mod tidy: ${line}" >&2
    exit 1
  done <<<"${errs}"
}
tidy_tagged .
# The descheduler's dependencies stay in its nested module: importers of the
# scheduler plugins must never inherit them.
# (-e: the graph lists k8s.io/kubernetes' staging modules at v0.0.0, which
# do not resolve and are not used.)
mods=$(go list -m -e all 2>/dev/null)
if grep -q '^sigs.k8s.io/descheduler ' <<<"${mods}"; then
  echo "the main module's graph lists sigs.k8s.io/descheduler: only descheduler/go.mod may require it" >&2
  exit 1
fi
# An older minor's release tree has no descheduler/.
if [[ -f descheduler/go.mod ]]; then tidy_tagged descheduler; fi
for mod in hack/tools hack/tools/helm hack/tools/kwok; do
  tidy "${mod}"
done
GOTOOLCHAIN=${KARPENTER_GOTOOLCHAIN:-go1.27.3} tidy hack/tools/karpenter
echo "go.mod and go.sum are tidy (main module, hack/tools, hack/tools/helm, hack/tools/kwok, descheduler, hack/tools/karpenter)"
