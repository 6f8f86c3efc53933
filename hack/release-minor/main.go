/*
Copyright The adminsched scheduler-plugins Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Command release-minor turns a copy of this repository's tree into the
// release tree of an older Kubernetes minor, the tree of a release-1.<minor>
// branch that importers can "go get" without build tags:
//
//	go run ./hack/release-minor --minor 1.36 --dir _output/release-1.36/tree
//
// In dir it makes go.<minor>.mod and go.<minor>.sum the module's go.mod and
// go.sum and removes the other minors' module files; drops every Go file
// whose kube<minor> build constraint excludes it and removes the constraint
// from those it keeps; makes the Makefile's newest minor that one; and sets
// the chart's versions to the release's.
// hack/release-minor.sh copies the tree from a commit and runs it.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

func main() {
	var (
		minor   = flag.String("minor", "", "the Kubernetes minor of the release tree, e.g. 1.36 (required)")
		dir     = flag.String("dir", "", "a copy of the repository's tree, rewritten in place (required)")
		version = flag.String("version", "", "the release, v0.<minor>.<patch> (default v0.<minor>.0)")
	)
	flag.Parse()
	if *minor == "" || *dir == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: release-minor --minor 1.<N> --dir <copy of the tree>")
		os.Exit(2)
	}
	if *version == "" {
		*version = "v0." + strings.TrimPrefix(*minor, "1.") + ".0"
	}
	changes, err := rewrite(*dir, *minor, *version)
	if err != nil {
		fmt.Fprintf(os.Stderr, "release-minor: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("release tree %s (Kubernetes %s) in %s: %d Go files dropped, %d constraints removed\n",
		*version, *minor, *dir, changes.dropped, changes.untagged)
}
