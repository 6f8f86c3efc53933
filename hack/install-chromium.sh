#!/usr/bin/env bash
# Makes headless Chromium available for test/browser: exits 0 when
# chromium (or $CHROMIUM) is there, installing Debian's chromium package
# when it is missing and this user may run apt-get (root, or sudo without
# a password). Otherwise it says why and exits 1; the browser tests then
# skip with their own message.
set -o nounset -o pipefail
if [[ -n "${CHROMIUM:-}" ]]; then
  [[ -x "${CHROMIUM}" ]] && exit 0
  echo "CHROMIUM=${CHROMIUM} is not an executable file" >&2
  exit 1
fi
command -v chromium >/dev/null && exit 0
if ! command -v apt-get >/dev/null; then
  echo "browser tests: chromium is not installed and there is no apt-get here: install Chromium, or set CHROMIUM to a Chrome or Chromium binary" >&2
  exit 1
fi
sudo=()
if [[ $(id -u) != 0 ]]; then
  if ! sudo -n true 2>/dev/null; then
    echo "browser tests: chromium is not installed and installing it needs root: run sudo apt-get install chromium" >&2
    exit 1
  fi
  sudo=(sudo -n)
fi
start=$(date +%s)
echo "installing Debian's chromium package for the browser tests (apt-get install chromium)" >&2
export DEBIAN_FRONTEND=noninteractive
if ! "${sudo[@]}" apt-get install -y -q chromium >/tmp/install-chromium.log 2>&1; then
  # A fresh machine may have no package lists yet.
  "${sudo[@]}" apt-get update -q >>/tmp/install-chromium.log 2>&1
  if ! "${sudo[@]}" apt-get install -y -q chromium >>/tmp/install-chromium.log 2>&1; then
    tail -20 /tmp/install-chromium.log >&2
    echo "browser tests: apt-get install chromium failed (log above, whole in /tmp/install-chromium.log)" >&2
    exit 1
  fi
fi
echo "installed $(chromium --version) in $(( $(date +%s) - start )) s" >&2
