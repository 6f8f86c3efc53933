//go:build !kube1.35

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

import v1 "k8s.io/api/core/v1"

// The scheduler's pod groups (PodSpec.SchedulingGroup, Handle.PodGroupManager)
// exist since 1.36.

// podGroupName returns the name of the pod group pod belongs to, "" for
// none.
func podGroupName(pod *v1.Pod) string {
	if g := pod.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil {
		return *g.PodGroupName
	}
	return ""
}

// groupMembers returns the pods the scheduler knows for the pod group
// namespace/name, placed or not; ok is false when it knows no such group.
func (pl *MaintenanceWindow) groupMembers(namespace, name string) ([]*v1.Pod, bool) {
	if pl.handle == nil {
		return nil, false
	}
	pgm := pl.handle.PodGroupManager()
	if pgm == nil {
		return nil, false
	}
	states := pgm.PodGroupStates()
	if states == nil {
		return nil, false
	}
	st, err := states.Get(namespace, name)
	if err != nil || st == nil {
		return nil, false
	}
	unscheduled := st.UnscheduledPods()
	// A copy: the scheduler's slice is not ours to append to.
	members := append(make([]*v1.Pod, 0, st.ScheduledPodsCount()+len(unscheduled)), st.ScheduledPods()...)
	for _, p := range unscheduled {
		members = append(members, p)
	}
	return members, true
}
