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

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

const kubeMinorFlag = "kube-minor"

// ownDir is the directory of this playground; tests replace it.
var ownDir = executableDir

const kubeMinorHelp = "the Kubernetes minor whose control plane and scheduler run the scenario " +
	"(1.35, 1.36 or 1.37; default: the playground's own): the playground of that minor, built in " +
	"the clone by make playground envtest KUBE_MINOR=<minor> (bin/<minor>/playground), runs it"

// kubeMinorArgs takes --kube-minor out of args (the program's name left
// out), before "--": minor is its value, "" when absent.
func kubeMinorArgs(args []string) (minor string, rest []string, err error) {
	rest = make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return minor, append(rest, args[i:]...), nil
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != kubeMinorFlag {
			rest = append(rest, a)
			continue
		}
		if !hasValue {
			if i+1 == len(args) {
				return "", nil, fmt.Errorf("--%s needs a value: one of %s", kubeMinorFlag, supportedMinors())
			}
			i++
			value = args[i]
		}
		minor = value
	}
	return minor, rest, nil
}

func supportedMinors() string {
	var s []string
	for _, m := range kubeversion.Supported {
		s = append(s, "1."+strconv.Itoa(m))
	}
	return strings.Join(s, ", ")
}

// minorPlayground is the playground binary of minor in the clone's bin/
// that holds this one: bin/playground is the newest minor's, bin/<minor>/
// the older ones'. It errors when minor is not supported or that binary
// is not built.
func minorPlayground(minor, ownDir string) (string, error) {
	n, err := parseMinor(minor)
	if err != nil {
		return "", err
	}
	bin := ownDir
	if kubeversion.Minor != kubeversion.Newest() {
		bin = filepath.Dir(ownDir) // this one is bin/<minor>/playground
	}
	path := filepath.Join(bin, "playground")
	if n != kubeversion.Newest() {
		path = filepath.Join(bin, minor, "playground")
	}
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("--%s %s: this playground is built on Kubernetes %s and %s is not there: "+
			"in the clone, run make playground envtest KUBE_MINOR=%s, then bin/playground --%s %s",
			kubeMinorFlag, minor, kubeversion.String(), path, minor, kubeMinorFlag, minor)
	}
	return path, nil
}

func parseMinor(minor string) (int, error) {
	rest, ok := strings.CutPrefix(minor, "1.")
	n, err := strconv.Atoi(rest)
	if !ok || err != nil || !slices.Contains(kubeversion.Supported, n) {
		return 0, fmt.Errorf("--%s %q: not a supported Kubernetes minor; use one of %s", kubeMinorFlag, minor, supportedMinors())
	}
	return n, nil
}

// execMinor replaces this process with the playground at path, run with
// args. $KUBEBUILDER_ASSETS is left out of its environment: it names this
// minor's control plane, and that playground finds its own next to it.
func execMinor(path string, args []string) error {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "KUBEBUILDER_ASSETS=") })
	err := syscall.Exec(path, append([]string{path}, args...), env)
	return errors.Join(fmt.Errorf("running %s", path), err)
}
