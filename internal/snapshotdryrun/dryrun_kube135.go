//go:build kube1.35

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

package snapshotdryrun

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"

	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

// DryRun has nothing to bridge on 1.35: its scheduler has no pod-group
// preemption, so nothing changes a Snapshot's NodeInfos and puts them back.
// Start says so; the tests that drive dry runs do not run on 1.35.
type DryRun struct{}

// Start returns the error that 1.35 has no dry runs.
func Start(*cache.Snapshot) (DryRun, error) {
	return DryRun{}, kubeversion.Unavailable(kubeversion.PodGroups)
}

// RemovePod is never reached: Start fails.
func (DryRun) RemovePod(klog.Logger, *v1.Pod, string) error {
	return kubeversion.Unavailable(kubeversion.PodGroups)
}

// AddPod is never reached: Start fails.
func (DryRun) AddPod(fwk.PodInfo, string) error {
	return kubeversion.Unavailable(kubeversion.PodGroups)
}

// End is never reached: Start fails.
func (DryRun) End() error { return kubeversion.Unavailable(kubeversion.PodGroups) }
