//go:build !kube1.36

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
// AddPod, EndMutations), which exists since 1.37: a preemption dry run on
// clones of the snapshot's NodeInfos.
type dryRun struct{ snapshot *cache.Snapshot }

func startDryRun(s *cache.Snapshot) (dryRun, error) { return dryRun{s}, s.StartMutations() }

func (d dryRun) removePod(logger klog.Logger, pod *v1.Pod, node string) error {
	return d.snapshot.RemovePod(logger, pod, node)
}

func (d dryRun) addPod(pi fwk.PodInfo, node string) error { return d.snapshot.AddPod(pi, node) }

func (d dryRun) end() error { return d.snapshot.EndMutations() }

// newCache bridges cache.New, whose compositePodGroupEnabled argument
// exists since 1.37.
func newCache(ctx context.Context) cache.Cache { return cache.New(ctx, nil, true, false) }
