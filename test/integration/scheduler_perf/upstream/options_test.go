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

package upstream

import (
	"context"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apimachinery/pkg/util/wait"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	ndffeatures "k8s.io/component-helpers/nodedeclaredfeatures/features"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures/types"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler"
	perf "k8s.io/kubernetes/test/integration/scheduler_perf"
	"k8s.io/kubernetes/test/utils/client-go/ktesting"
)

// The options below do what upstream's folders pass to the harness in their
// TestSchedulerPerf; they are written here because upstream keeps them in
// _test.go files, which cannot be imported.

// draStableOptions turns off, for the "stable" allocator, the DRA features
// it does not implement, as the dra folder's test does. Other allocators
// run with the workloads' own gates.
func draStableOptions(allocator string) []perf.SchedulerPerfOption {
	if allocator != "stable" {
		return nil
	}
	return []perf.SchedulerPerfOption{perf.WithPreRunFn(func(tCtx ktesting.TContext, _ *perf.Workload) (func(), error) {
		gate := utilfeature.DefaultFeatureGate.(featuregate.MutableVersionedFeatureGate)
		// Under an older emulated version these features do not exist
		// and cannot be set.
		if gate.EmulationVersion().AtLeast(version.MustParse("1.34")) {
			featuregatetesting.SetFeatureGatesDuringTest(tCtx, utilfeature.DefaultFeatureGate, featuregatetesting.FeatureOverrides{
				features.DRAConsumableCapacity:      false,
				features.DRADeviceBindingConditions: false,
			})
		}
		return nil, nil
	})}
}

// tasOptions gives topology-aware pod-group scheduling the longer wait its
// folder's test gives it.
func tasOptions(string) []perf.SchedulerPerfOption {
	return []perf.SchedulerPerfOption{perf.WithPodsSchedulingTimeout(20 * time.Minute)}
}

// nodeDeclaredFeaturesOptions registers numNodeDeclaredFeatures made-up
// features before the scheduler starts and declares them on every node
// once the nodes exist, so that the workloads' pods (which use pod-level
// resources, what each made-up feature infers) find nodes that declare
// them.
func nodeDeclaredFeaturesOptions(string) []perf.SchedulerPerfOption {
	return []perf.SchedulerPerfOption{
		perf.WithPreRunFn(registerDeclaredFeatures),
		perf.WithNodeUpdateFn(declareFeatures),
	}
}

// declaredFeatures returns the names of the workload's made-up features,
// sorted, or nil when the workload does not enable NodeDeclaredFeatures.
func declaredFeatures(w *perf.Workload) []string {
	if !w.FeatureGates[features.NodeDeclaredFeatures] {
		return nil
	}
	n, err := w.GetParam("numNodeDeclaredFeatures")
	if err != nil {
		return nil
	}
	names := make([]string, 0, n)
	for i := 1; i <= n; i++ {
		names = append(names, fmt.Sprintf("Feature%d", i))
	}
	slices.Sort(names)
	return names
}

func registerDeclaredFeatures(_ ktesting.TContext, w *perf.Workload) (func(), error) {
	names := declaredFeatures(w)
	if names == nil {
		return nil, nil
	}
	saved := ndffeatures.AllFeatures
	registry := make([]ndf.Feature, 0, len(names))
	for _, name := range names {
		registry = append(registry, podLevelResourcesFeature(name))
	}
	ndffeatures.AllFeatures = registry
	return func() { ndffeatures.AllFeatures = saved }, nil
}

func declareFeatures(tCtx ktesting.TContext, sched *scheduler.Scheduler, w *perf.Workload, nodes *v1.NodeList) error {
	names := declaredFeatures(w)
	if names == nil {
		return nil
	}
	for i := range nodes.Items {
		node := nodes.Items[i].DeepCopy()
		node.Status.DeclaredFeatures = names
		if _, err := tCtx.Client().CoreV1().Nodes().UpdateStatus(tCtx, node, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("declaring features on node %s: %w", node.Name, err)
		}
	}
	// The measured pods must not be scheduled against nodes the
	// scheduler still sees without their features.
	return wait.PollUntilContextTimeout(tCtx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		for _, n := range nodes.Items {
			info, err := sched.Cache.GetNode(n.Name)
			if err != nil || !slices.Equal(info.Node().Status.DeclaredFeatures, names) {
				return false, nil
			}
		}
		return true, nil
	})
}

// podLevelResourcesFeature is a made-up node feature that a pod needs when
// it sets pod-level resources.
type podLevelResourcesFeature string

func (f podLevelResourcesFeature) Name() string                         { return string(f) }
func (podLevelResourcesFeature) Discover(*ndf.NodeConfiguration) bool   { return true }
func (podLevelResourcesFeature) Requirements() *ndf.FeatureRequirements { return nil }
func (podLevelResourcesFeature) InferForUpdate(_, _ *ndf.PodInfo) bool  { return false }
func (podLevelResourcesFeature) MaxVersion() *version.Version           { return nil }
func (podLevelResourcesFeature) InferForScheduling(p *ndf.PodInfo) bool {
	return p.Spec != nil && p.Spec.Resources != nil
}
