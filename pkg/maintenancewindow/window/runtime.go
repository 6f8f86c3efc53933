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

package window

import (
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ExpectedRuntimeAnnotation is the pod annotation by which a pod declares
// how long it runs: a Go duration such as "20m" or "1h30m".
const ExpectedRuntimeAnnotation = "maintenancewindow.adminsched.io/expected-runtime"

// maxExpectedRuntime bounds a usable expected runtime: a pod that claims to
// run longer than a leap year says nothing a window's look-ahead can use,
// and the bound keeps now+runtime far from time.Duration's overflow.
const maxExpectedRuntime = 366 * 24 * time.Hour

var (
	errRuntimeNotPositive = errors.New("must be positive")
	errRuntimeTooLong     = fmt.Errorf("must be at most %v (366 days)", maxExpectedRuntime)
)

// Runtime is what is known of how long a pod (or its group) runs. The zero
// value is an unknown runtime.
type Runtime struct {
	D     time.Duration
	Known bool
}

// PodRuntime returns pod's own expected runtime: the smaller of its
// activeDeadlineSeconds and its annotation, since the deadline kills the pod
// and the annotation is the pod's own claim. err says why the annotation is
// ignored (nil when it is absent or usable).
func PodRuntime(pod *v1.Pod) (Runtime, error) {
	var rt Runtime
	if s := pod.Spec.ActiveDeadlineSeconds; s != nil && *s > 0 && *s <= int64(maxExpectedRuntime/time.Second) {
		rt = Runtime{D: time.Duration(*s) * time.Second, Known: true}
	}
	value, ok := pod.Annotations[ExpectedRuntimeAnnotation]
	if !ok {
		return rt, nil
	}
	d, err := time.ParseDuration(value)
	switch {
	case err != nil:
		return rt, err
	case d <= 0:
		return rt, errRuntimeNotPositive
	case d > maxExpectedRuntime:
		return rt, errRuntimeTooLong
	}
	if !rt.Known || d < rt.D {
		rt = Runtime{D: d, Known: true}
	}
	return rt, nil
}

// GroupRuntime returns the runtime of the pod group of the pod with uid
// self and runtime rt, given the group's members: the longest of theirs,
// unknown when one of theirs is (a gang stands or falls together, so each
// member must be safe until the last one ends).
func GroupRuntime(rt Runtime, self types.UID, members []*v1.Pod) Runtime {
	if !rt.Known {
		return rt
	}
	for _, m := range members {
		if m.UID == self {
			continue
		}
		mrt, _ := PodRuntime(m)
		if !mrt.Known {
			return Runtime{}
		}
		rt.D = max(rt.D, mrt.D)
	}
	return rt
}
