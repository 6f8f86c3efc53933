#!/usr/bin/env bash
# Fails when `go mod tidy` would change go.mod or go.sum.
set -o errexit -o nounset -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
go mod tidy -diff || { echo "go.mod/go.sum are not tidy: run go mod tidy and commit the result" >&2; exit 1; }
echo "go.mod and go.sum are tidy"
