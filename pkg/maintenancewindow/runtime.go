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

package maintenancewindow

import (
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
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

// runtimeInfo is what the plugin knows of how long a pod (or its group)
// runs. The zero value is an unknown runtime.
type runtimeInfo struct {
	d     time.Duration
	known bool
}

// podRuntime returns pod's own expected runtime: the smaller of its
// activeDeadlineSeconds and its annotation, since the deadline kills the pod
// and the annotation is the pod's own claim. err says why the annotation is
// ignored (nil when it is absent or usable).
func podRuntime(pod *v1.Pod) (runtimeInfo, error) {
	var rt runtimeInfo
	if s := pod.Spec.ActiveDeadlineSeconds; s != nil && *s > 0 && *s <= int64(maxExpectedRuntime/time.Second) {
		rt = runtimeInfo{d: time.Duration(*s) * time.Second, known: true}
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
	if !rt.known || d < rt.d {
		rt = runtimeInfo{d: d, known: true}
	}
	return rt, nil
}

// expectedRuntime returns how long pod is expected to run as the plugin
// judges it: unknown when the look-ahead is off; for a member of a pod
// group, the longest runtime of the group's members, unknown when one of
// theirs is (a gang stands or falls together, so each member must be safe
// until the last one ends). A malformed annotation on pod is logged at V(4)
// when logger is given.
func (pl *MaintenanceWindow) expectedRuntime(logger *klog.Logger, pod *v1.Pod) runtimeInfo {
	if !pl.runtimeAware {
		return runtimeInfo{}
	}
	rt, err := podRuntime(pod)
	if err != nil && logger != nil {
		logger.V(4).Info("Ignoring the pod's expected runtime", "pod", klog.KObj(pod),
			"annotation", ExpectedRuntimeAnnotation, "value", pod.Annotations[ExpectedRuntimeAnnotation], "err", err)
	}
	group := podGroupName(pod)
	if group == "" || !rt.known {
		return rt
	}
	members, ok := pl.groupMembers(pod.Namespace, group)
	if !ok {
		// The scheduler's view of the group is not at hand: the other
		// members' runtimes are unknown, and so is the group's.
		return runtimeInfo{}
	}
	for _, m := range members {
		if m.UID == pod.UID {
			continue
		}
		mrt, _ := podRuntime(m)
		if !mrt.known {
			return runtimeInfo{}
		}
		rt.d = max(rt.d, mrt.d)
	}
	return rt
}

// runtimeOf returns the runtime that PreFilter (or PreScore) worked out for
// the cycle, or works it out again, without logging, when neither ran (a
// profile that enables the plugin at filter or score only).
func (pl *MaintenanceWindow) runtimeOf(state fwk.CycleState, pod *v1.Pod) runtimeInfo {
	if !pl.runtimeAware {
		return runtimeInfo{}
	}
	if state != nil {
		if data, err := state.Read(stateKey); err == nil {
			if c, ok := data.(*cycleData); ok {
				return c.runtime
			}
		}
	}
	return pl.expectedRuntime(nil, pod)
}

// endsBefore reports whether a pod of runtime rt, placed at now, ends
// runtimeMargin or more before start.
func (pl *MaintenanceWindow) endsBefore(rt runtimeInfo, now, start time.Time) bool {
	return rt.known && !now.Add(rt.d+pl.runtimeMargin).After(start)
}
