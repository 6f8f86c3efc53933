//go:build kube1.36

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

package podcount

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
)

// dryRun bridges the Snapshot's mutation session (StartMutations, RemovePod,
// AddPod, EndMutations), which exists since 1.37. 1.36's pod-group
// preemption backs the snapshot up instead (BackupSnapshot clones every
// NodeInfo) and changes the clones' NodeInfos directly, as this does.
type dryRun struct {
	snapshot *cache.Snapshot
	restore  cache.RestoreSnapshot
}

func startDryRun(s *cache.Snapshot) (dryRun, error) {
	restore, err := s.BackupSnapshot()
	return dryRun{s, restore}, err
}

func (d dryRun) removePod(logger klog.Logger, pod *v1.Pod, node string) error {
	ni, err := d.snapshot.Get(node)
	if err != nil {
		return err
	}
	return ni.RemovePod(logger, pod)
}

func (d dryRun) addPod(pi fwk.PodInfo, node string) error {
	ni, err := d.snapshot.Get(node)
	if err != nil {
		return err
	}
	ni.AddPodInfo(pi)
	return nil
}

func (d dryRun) end() error {
	d.restore()
	return nil
}

// newCache bridges cache.New, whose compositePodGroupEnabled argument
// exists since 1.37.
func newCache(ctx context.Context) cache.Cache { return cache.New(ctx, nil, true) }
