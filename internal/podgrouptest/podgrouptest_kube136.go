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

// Package podgrouptest gives the tests of the plugins' pod-group paths what
// they need from the scheduler on every supported minor: marking a cycle as
// a pod group's, a pod's group, and the snapshot's assume and forget of
// pod-group cycles. All of them exist since 1.36; on 1.35, which has no pod
// groups, Skip skips the test and the rest must not be reached.
package podgrouptest

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// Skip skips t where the minor has no pod groups: never on 1.36 and later.
func Skip(testing.TB) {}

// MarkCycle makes state a pod-group scheduling cycle's.
func MarkCycle(state *framework.CycleState) {
	state.SetPodGroupSchedulingCycle(framework.NewCycleState())
}

// SetGroup makes pod a member of the pod group name.
func SetGroup(pod *v1.Pod, name string) {
	pod.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &name}
}

// Assume adds pi to s as a pod-group cycle does.
func Assume(s *cache.Snapshot, pi *framework.PodInfo) error { return s.AssumePod(pi) }

// Forget reverts an assumed pod as a failed pod-group cycle does.
func Forget(s *cache.Snapshot, logger klog.Logger, pod *v1.Pod) error {
	return s.ForgetPod(logger, pod)
}
