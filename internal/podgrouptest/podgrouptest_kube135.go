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

package podgrouptest

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

// Skip skips t: 1.35 has no pod groups.
func Skip(t testing.TB) {
	t.Helper()
	t.Skip(kubeversion.Unavailable(kubeversion.PodGroups))
}

const unreachable = "podgrouptest: 1.35 has no pod groups; call Skip first"

// MarkCycle is never reached on 1.35: Skip skipped the test.
func MarkCycle(*framework.CycleState) { panic(unreachable) }

// SetGroup is never reached on 1.35: Skip skipped the test.
func SetGroup(*v1.Pod, string) { panic(unreachable) }

// Assume is never reached on 1.35: Skip skipped the test.
func Assume(*cache.Snapshot, *framework.PodInfo) error { panic(unreachable) }

// Forget is never reached on 1.35: Skip skipped the test.
func Forget(*cache.Snapshot, klog.Logger, *v1.Pod) error { panic(unreachable) }
