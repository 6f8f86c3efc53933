#!/usr/bin/env bash
# Fails when a Go source file under internal/, cmd/, pkg/ or descheduler/ (tests and
# generated code aside) is longer than MAX_LINES (350): past that a file
# holds more than one job. Split the file along what it does rather than
# raising the limit. DIRS overrides the directories checked.
set -o errexit -o nounset -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
max=${MAX_LINES:-350}
read -r -a dirs <<<"${DIRS:-internal cmd pkg descheduler}"
pathspecs=()
for d in "${dirs[@]}"; do
  pathspecs+=("${d}/*.go")
done
long=$(git ls-files "${pathspecs[@]}" | grep -v '_test\.go$' | grep -v '/zz_generated' | xargs -r wc -l | awk -v max="${max}" '$2 != "total" && $1 > max {print "  " $2 ": " $1 " lines"}')
if [ -n "${long}" ]; then
  echo "Go files under ${dirs[*]} longer than ${max} lines (split them along what they do):" >&2
  echo "${long}" >&2
  exit 1
fi
echo "every Go file under ${dirs[*]} has at most ${max} lines"
