#!/usr/bin/env bash
# Makes the release tree of an older Kubernetes minor from a commit of main:
# the tree a release-1.<minor> branch holds and importers `go get`, with that
# minor's go.mod and no build tags (hack/release-minor does the rewrite).
#
#   hack/release-minor.sh 1.36                  # HEAD's tree -> _output/release-1.36/tree
#   REF=<commit> hack/release-minor.sh 1.36 DIR # another commit, another folder
#   BRANCH=1 hack/release-minor.sh 1.36         # also commit it on branch release-1.36
#   BRANCH=1 TAG=v0.36.0 hack/release-minor.sh 1.36   # and tag that commit
#
# The branch commit's parent is the branch's previous commit, so release-1.36
# is a line of releases as upstream's release branches are; its message
# names the commit of main it was made from. Pushing the branch and the tag
# is left to the releaser.
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"
MINOR=${1:?usage: hack/release-minor.sh 1.<minor> [out dir]}
OUT=${2:-${ROOT}/_output/release-${MINOR}/tree}
REF=${REF:-HEAD}
BRANCH=${BRANCH:-0}
TAG=${TAG:-}

commit=$(git rev-parse --verify "${REF}^{commit}")
if [[ -n "${TAG}" ]]; then
  [[ "${BRANCH}" == 1 ]] || { echo "TAG=${TAG} needs BRANCH=1: a tag names the branch's commit" >&2; exit 1; }
  [[ "${TAG}" =~ ^v0\.${MINOR#1.}\.[0-9]+$ ]] || { echo "TAG=${TAG}: a ${MINOR} release is tagged v0.${MINOR#1.}.<patch>" >&2; exit 1; }
fi

rm -rf "${OUT}"
mkdir -p "${OUT}"
git archive --format=tar "${commit}" | tar -x -C "${OUT}"
# The descheduler build (a nested module) follows the newest minor only.
rm -rf "${OUT}/descheduler"
go run ./hack/release-minor --minor "${MINOR}" --dir "${OUT}" ${TAG:+--version "${TAG}"}

if [[ "${BRANCH}" == 1 ]]; then
  # A fresh index: git refuses an existing empty file as one.
  tmp=$(mktemp -d)
  trap 'rm -rf "${tmp}"' EXIT
  index=${tmp}/index
  branch="release-${MINOR}"
  tree=$(GIT_INDEX_FILE="${index}" git --work-tree="${OUT}" add -A . >/dev/null &&
    GIT_INDEX_FILE="${index}" git write-tree)
  parent=()
  if git rev-parse --verify -q "refs/heads/${branch}" >/dev/null; then
    parent=(-p "$(git rev-parse "refs/heads/${branch}")")
  fi
  msg="Release tree for Kubernetes ${MINOR} from main $(git rev-parse --short "${commit}")"
  new=$(git commit-tree "${tree}" "${parent[@]}" -m "${msg}")
  git update-ref "refs/heads/${branch}" "${new}"
  echo "branch ${branch} is at ${new}: ${msg}"
  if [[ -n "${TAG}" ]]; then
    git tag -a "${TAG}" -m "${TAG}: ${msg}" "${new}"
    echo "tagged ${new} ${TAG}"
  fi
fi
