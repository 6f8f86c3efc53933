#!/usr/bin/env bash
# Checks the repo's logging calls with logcheck (sigs.k8s.io/logtools), as
# upstream Kubernetes does: structured and contextual logging only (a logger
# from klog.FromContext or passed in, never klog.InfoS or klog.Infof).
#
# logcheck is pinned in hack/tools/go.mod, a module of its own so that its
# dependencies never move the main go.mod, and built into bin/ once.
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"
BIN=${ROOT}/bin/logcheck
want="$(go version) $(cd hack/tools && go list -m -f '{{.Version}}' sigs.k8s.io/logtools)"
stamp="${BIN}.stamp"
if [[ ! -x "${BIN}" || ! -f "${stamp}" || "$(cat "${stamp}")" != "${want}" ]]; then
  mkdir -p "$(dirname "${BIN}")"
  (cd hack/tools && go build -o "${BIN}" sigs.k8s.io/logtools/logcheck)
  echo "${want}" > "${stamp}"
fi

# Every package of the main module; generated code has no logging calls.
# and of the nested descheduler module.
if ! "${BIN}" -check-contextual ./... || { [[ -d descheduler ]] && ! (cd descheduler && "${BIN}" -check-contextual ./...); }; then
  echo "logcheck found logging calls to fix (see above): use klog.FromContext(ctx) and structured key/value pairs" >&2
  exit 1
fi
echo "logcheck: logging calls are structured and contextual"
