#!/usr/bin/env bash
# Runs shellcheck on the shell scripts CI and the Makefile run (hack/*.sh,
# .ci/run). A missing shellcheck is installed from Debian's packages, as
# hack/install-buildah.sh installs buildah: CI starts from a fresh Debian
# machine, as root. Fix what it reports; a per-line
# `# shellcheck disable=SCxxxx` needs a comment saying why.
#
#   hack/verify-shellcheck.sh
set -o errexit -o nounset -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

install_shellcheck() {
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "verify-shellcheck.sh: shellcheck missing and no apt-get here: install shellcheck with your package manager" >&2
    exit 1
  fi
  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || { echo "verify-shellcheck.sh: root or sudo needed to install shellcheck" >&2; exit 1; }
    sudo=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  echo "installing shellcheck from Debian's packages"
  # Fresh machines may have no package lists, or stale ones: update and retry.
  if ! "${sudo[@]}" apt-get install -y --no-install-recommends shellcheck; then
    "${sudo[@]}" apt-get update
    "${sudo[@]}" apt-get install -y --no-install-recommends shellcheck
  fi
}

command -v shellcheck >/dev/null 2>&1 || install_shellcheck

mapfile -t scripts < <(git ls-files 'hack/*.sh' .ci/run)
shellcheck --external-sources "${scripts[@]}"
echo "shellcheck $(shellcheck --version | awk '/^version:/ {print $2}'): no findings in ${#scripts[@]} scripts (hack/*.sh, .ci/run)"
