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

package scenario

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/adminsched/scheduler-plugins/internal/filelimit"
)

// Size limits of a scenario. The playground expands node counts and replicas
// in memory and creates every node and pod on one embedded API server, so a
// scenario is capped well below what would exhaust either; upstream's
// scheduler_perf runs up to 5,000 nodes and 10,000 pods the same way.
const (
	// MaxNodes caps a node spec's count and the number of nodes a scenario
	// makes in total.
	MaxNodes = 10000
	// MaxPods caps a ReplicaSet's or Deployment's spec.replicas and the
	// number of pods a scenario makes in total.
	MaxPods = 10000
	// MaxAnnotationBytes caps the node annotations a scenario makes in
	// total (keys and values, times each spec's count): the API server
	// allows 256 KiB per node, which 10,000 nodes would turn into 2.5 GiB.
	MaxAnnotationBytes = 16 << 20
)

// MaxScenarioBytes caps a scenario file and its base. The largest scenario
// the other limits allow, a snapshot of MaxNodes nodes with 17 labels each
// (as on a cloud provider's nodes) and MaxBoundPods pods with 4 labels, an
// owner and 3 containers each, is 69 MiB (a 5,000-node 50,000-pod one
// 34 MiB).
const MaxScenarioBytes = 128 << 20

func readScenarioFile(path string) ([]byte, error) {
	data, err := filelimit.Read(path, MaxScenarioBytes, "scenario file")
	if errors.Is(err, fs.ErrNotExist) && !filepath.IsAbs(path) {
		return nil, notFound(path, err)
	}
	return data, err
}

// notFound says where a relative path that is not there was looked for,
// and, when the playground runs from a clone (bin/playground), where a file
// of that path is in the clone: the examples' paths are relative to the
// clone's root, and a newcomer runs them from elsewhere.
func notFound(path string, err error) error {
	wd, wdErr := os.Getwd()
	if wdErr != nil {
		return err
	}
	if exe, exeErr := os.Executable(); exeErr == nil {
		if alt := inClone(path, filepath.Dir(exe)); alt != "" {
			return fmt.Errorf("%w (relative to the working directory %s); the clone of this playground has %s", err, wd, alt)
		}
		examples := filepath.Join(filepath.Dir(filepath.Dir(exe)), "examples", "scenarios")
		if fi, statErr := os.Stat(examples); statErr == nil && fi.IsDir() {
			return fmt.Errorf("%w (relative to the working directory %s); the clone of this playground has its scenarios in %s", err, wd, examples)
		}
	}
	return fmt.Errorf("%w (relative to the working directory %s; the examples' paths are relative to the clone's root)", err, wd)
}

// inClone returns path under the clone whose bin/ is binDir, when a regular
// file is there, else "".
func inClone(path, binDir string) string {
	alt := filepath.Join(filepath.Dir(binDir), path)
	if fi, err := os.Stat(alt); err == nil && fi.Mode().IsRegular() {
		return alt
	}
	return ""
}

// quantityOutOfRange says why q is larger than the scheduler can count a
// resource name in, or returns "": CPU in millicores and other resources in
// units as int64, pods as an int (framework.Resource). A larger value (cpu:
// 1e100) would be clamped or wrap there and make a node nothing fits on.
func quantityOutOfRange(name corev1.ResourceName, q resource.Quantity) string {
	switch name {
	case corev1.ResourceCPU:
		if largest := resource.NewMilliQuantity(math.MaxInt64, resource.DecimalSI); q.Cmp(*largest) > 0 {
			return fmt.Sprintf("must be at most %s (the scheduler counts CPU in millicores, as an int64)", largest)
		}
	case corev1.ResourcePods:
		if largest := resource.NewQuantity(math.MaxInt, resource.DecimalSI); q.Cmp(*largest) > 0 {
			return fmt.Sprintf("must be at most %s (the scheduler counts pods as an int)", largest)
		}
	default:
		if largest := resource.NewQuantity(math.MaxInt64, resource.DecimalSI); q.Cmp(*largest) > 0 {
			return fmt.Sprintf("must be at most %s (the scheduler counts it as an int64)", largest)
		}
	}
	return ""
}
