#!/usr/bin/env bash
# Fails when a Go source file under internal/ (tests aside) is longer than
# MAX_LINES (350): past that a file holds more than one job, and the
# playground's pipeline keeps one job per file. Split the file
# along what it does rather than raising the limit.
set -o errexit -o nounset -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
max=${MAX_LINES:-350}
long=$(git ls-files 'internal/*.go' | grep -v '_test\.go$' | grep -v '/zz_generated' | xargs -r wc -l | awk -v max="${max}" '$2 != "total" && $1 > max {print "  " $2 ": " $1 " lines"}')
if [ -n "${long}" ]; then
  echo "Go files under internal/ longer than ${max} lines (split them along what they do):" >&2
  echo "${long}" >&2
  exit 1
fi
echo "every Go file under internal/ has at most ${max} lines"
