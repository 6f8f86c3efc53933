#!/usr/bin/env bash
# Installs what hack/build-image.sh needs when no Docker engine answers:
# buildah, and ca-certificates (the image's CA bundle comes from that
# package's files), from Debian's packages. Idempotent: when both are there it
# only says so. Needs root (CI and these machines run as root) or sudo.
# From cold about 10 s with fresh package lists (14 packages, no
# recommends); apt-get update first when the lists are missing or stale.
#
#   hack/install-buildah.sh
set -o errexit -o nounset -o pipefail

have() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

missing=()
command -v buildah >/dev/null 2>&1 || missing+=(buildah)
have ca-certificates || missing+=(ca-certificates)
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "$(buildah --version) and ca-certificates are installed"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-buildah.sh: ${missing[*]} missing and no apt-get here: install them with your package manager, or set IMAGE_TOOL=docker|podman" >&2
  exit 1
fi
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null 2>&1 || { echo "install-buildah.sh: root or sudo needed to install ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi

export DEBIAN_FRONTEND=noninteractive
echo "installing ${missing[*]} from Debian's packages"
# A fresh machine may have no package lists, or lists that name versions the
# mirror no longer serves: update once and retry before giving up.
if ! "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; then
  "${sudo[@]}" apt-get update
  "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi
buildah --version
