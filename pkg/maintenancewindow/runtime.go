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
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/window"
)

// ExpectedRuntimeAnnotation is the pod annotation by which a pod declares
// how long it runs: a Go duration such as "20m" or "1h30m".
const ExpectedRuntimeAnnotation = window.ExpectedRuntimeAnnotation

// expectedRuntime returns how long pod is expected to run as the plugin
// judges it: unknown when the look-ahead is off; for a member of a pod
// group, the group's runtime (window.GroupRuntime) as the scheduler sees
// the group, unknown when it does not. A malformed annotation on pod is
// logged at V(4) when logger is given.
func (pl *MaintenanceWindow) expectedRuntime(logger *klog.Logger, pod *v1.Pod) window.Runtime {
	if !pl.runtimeAware {
		return window.Runtime{}
	}
	rt, err := window.PodRuntime(pod)
	if err != nil && logger != nil {
		logger.V(4).Info("Ignoring the pod's expected runtime", "pod", klog.KObj(pod),
			"annotation", ExpectedRuntimeAnnotation, "value", pod.Annotations[ExpectedRuntimeAnnotation], "err", err)
	}
	group := podGroupName(pod)
	if group == "" || !rt.Known {
		return rt
	}
	members, ok := pl.groupMembers(pod.Namespace, group)
	if !ok {
		// The scheduler's view of the group is not at hand: the other
		// members' runtimes are unknown, and so is the group's.
		return window.Runtime{}
	}
	return window.GroupRuntime(rt, pod.UID, members)
}

// runtimeOf returns the runtime that PreFilter (or PreScore) worked out for
// the cycle, or works it out again, without logging, when neither ran (a
// profile that enables the plugin at filter or score only).
func (pl *MaintenanceWindow) runtimeOf(state fwk.CycleState, pod *v1.Pod) window.Runtime {
	if !pl.runtimeAware {
		return window.Runtime{}
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
