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

// Package schedulertest bridges, for tests, the scheduler calls whose form
// changed in 1.36, so the same tests drive every supported minor.
package schedulertest

import (
	"context"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// SignPod bridges Framework.SignPod, whose recordPluginStats argument 1.36
// removed.
func SignPod(ctx context.Context, f framework.Framework, pod *v1.Pod) fwk.PodSignature {
	return f.SignPod(ctx, pod)
}

// CachedNode bridges Cache.GetNode, which exists since 1.36.
func CachedNode(c cache.Cache, name string) (fwk.NodeInfo, error) { return c.GetNode(name) }
