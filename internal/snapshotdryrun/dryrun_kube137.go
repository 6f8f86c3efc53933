//go:build !kube1.36 && !kube1.35

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

// Package snapshotdryrun changes a scheduler Snapshot's NodeInfos for a
// while and then puts them back, as pod-group preemption's dry runs do, on
// every supported minor: the count memo's tests drive it.
package snapshotdryrun

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
)

// DryRun bridges the Snapshot's mutation session (StartMutations,
// RemovePod, AddPod, EndMutations), which exists since 1.37: changes on
// clones of the snapshot's NodeInfos.
type DryRun struct{ snapshot *cache.Snapshot }

// Start begins a dry run on s.
func Start(s *cache.Snapshot) (DryRun, error) { return DryRun{s}, s.StartMutations() }

// RemovePod removes pod from node's NodeInfo for the dry run.
func (d DryRun) RemovePod(logger klog.Logger, pod *v1.Pod, node string) error {
	return d.snapshot.RemovePod(logger, pod, node)
}

// AddPod adds pi to node's NodeInfo for the dry run.
func (d DryRun) AddPod(pi fwk.PodInfo, node string) error { return d.snapshot.AddPod(pi, node) }

// End puts the snapshot's NodeInfos back.
func (d DryRun) End() error { return d.snapshot.EndMutations() }
