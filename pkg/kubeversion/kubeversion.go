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

// Package kubeversion says which Kubernetes minor this build's k8s.io
// libraries come from, and which of the features the project builds on that
// minor has. The minor is chosen at build time: go.mod and no tag is the
// newest (1.37); go.<minor>.mod with the tag kube<minor> an older one
// (KUBE_MINOR in the Makefile sets both). Code that differs by minor lives in
// files named after the API they bridge, behind the same tags.
package kubeversion

import (
	"fmt"
	"os"
	"path/filepath"
)

// Feature is something the project uses that not every supported minor has.
type Feature struct {
	// Name is how errors, logs and the README's compatibility table call it.
	Name string
	// Since is the first minor that has it; Gate, when not empty, is the
	// feature gate it needs on minors before GA (off by default there).
	Since int
	Gate  string
	// GateUntil is the last minor on which Gate must be switched on.
	GateUntil int
}

// The features that depend on the minor. doc: README.md's compatibility table.
var (
	// PodGroups are scheduling.k8s.io PodGroups scheduled as one (gang),
	// with pod-group scheduling cycles: v1alpha2 in 1.36, v1beta1 in 1.37.
	PodGroups = Feature{Name: "pod groups (gang scheduling)", Since: 36, Gate: "GenericWorkload", GateUntil: 37}
	// MutatingAdmissionPolicyV1 is admissionregistration.k8s.io/v1
	// MutatingAdmissionPolicy, what placement-admission renders.
	MutatingAdmissionPolicyV1 = Feature{Name: "MutatingAdmissionPolicy v1", Since: 36}
	// DRAExtendedResource lets a pod ask for license seats as an extended
	// resource that a DeviceClass maps to devices: beta and on in 1.36.
	DRAExtendedResource = Feature{Name: "DRA extended resources", Since: 36}
	// DRAConsumableCapacity lets several claims share one device
	// (allowMultipleAllocations), what the license driver's devices: Shared
	// publishes: beta and on in 1.36, alpha and off in 1.35, whose API
	// server drops the field.
	DRAConsumableCapacity = Feature{Name: "DRA consumable capacity (devices: Shared)", Since: 36}
	// RawScores are the per-plugin scores before weighting that the
	// framework reports to a pod's scheduling trace (playground --explain).
	RawScores = Feature{Name: "raw plugin scores in scheduling results", Since: 37}
	// DeviceHealth is the kubelet plugin's device health service.
	DeviceHealth = Feature{Name: "DRA device health reports", Since: 37}
	// UpstreamPerfSuites is test/integration/scheduler_perf/upstream: the
	// scheduler_perf test cases of k8s.io/kubernetes run with our plugins,
	// built against the newest minor only.
	UpstreamPerfSuites = Feature{Name: "upstream's scheduler_perf suites with our plugins", Since: 37}
)

// Features lists every Feature, in the order of the README's table.
var Features = []Feature{PodGroups, MutatingAdmissionPolicyV1, DRAExtendedResource, DRAConsumableCapacity, RawScores, DeviceHealth, UpstreamPerfSuites}

// Supported are the minors this tree builds for, oldest first.
var Supported = []int{35, 36, 37}

// Newest is the newest supported minor, the one go.mod builds on main.
func Newest() int { return Supported[len(Supported)-1] }

// ModFile is the module file of this build's minor in the tree at root:
// go.1.<minor>.mod where the tree has one (an older minor on main), else
// go.mod (the newest minor, or a release tree, whose go.mod is its minor's).
func ModFile(root string) string {
	if older := filepath.Join(root, fmt.Sprintf("go.1.%d.mod", Minor)); fileExists(older) {
		return older
	}
	return filepath.Join(root, "go.mod")
}

// BuildFlags are the go build flags that build this build's minor from the
// tree at root: its module file and tag, or none for go.mod.
func BuildFlags(root string) []string {
	mod := ModFile(root)
	if filepath.Base(mod) == "go.mod" {
		return nil
	}
	return []string{"-modfile=" + mod, "-tags=kube" + String()}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Has tells whether this build's minor has f.
func Has(f Feature) bool { return Minor >= f.Since }

// NeedsGate tells whether f needs its feature gate switched on in this build's
// minor.
func NeedsGate(f Feature) bool { return Has(f) && f.Gate != "" && Minor <= f.GateUntil }

// String is the minor as Kubernetes writes it: "1.37".
func String() string { return fmt.Sprintf("1.%d", Minor) }

// Unavailable is the error for a feature this build's minor lacks.
func Unavailable(f Feature) error {
	return fmt.Errorf("%s needs Kubernetes 1.%d or later; this build uses the 1.%d libraries (build with a newer KUBE_MINOR)", f.Name, f.Since, Minor)
}
