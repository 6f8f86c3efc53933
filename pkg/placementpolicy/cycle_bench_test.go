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

package placementpolicy

import (
	"fmt"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeaffinity"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

// evict is larger than a core's L2 cache (2 MiB here): walking it between
// calls leaves a plugin's own data as cold as a real cycle does, where the
// Filter and Score of every plugin over hundreds of nodes run between one
// PreFilter and the next.
var evict = make([]byte, 8<<20)

var evictSink byte

func evictCaches() {
	var x byte
	for i := 0; i < len(evict); i += 64 {
		x += evict[i]
	}
	evictSink += x
}

// touchPod reads what the other plugins of a cycle read of the pod before
// ours run, so that the pod itself is as warm for both plugins as in the
// framework.
func touchPod(pod *v1.Pod) {
	n := len(pod.Labels) + len(pod.OwnerReferences) + len(pod.Namespace) + len(pod.Spec.NodeSelector)
	if pod.Spec.Affinity != nil {
		n++
	}
	for k, v := range pod.Labels {
		n += len(k) + len(v)
	}
	evictSink += byte(n)
}

// touchSpec reads only what the in-tree plugins of a cycle read of a pod
// without affinity, spread constraints or volumes: its spec, and its UID and
// name, which the scheduler's cache and queue key it by. Its labels and
// namespace stay as cold as the rest of the object.
func touchSpec(pod *v1.Pod) {
	n := len(pod.UID) + len(pod.Name) + len(pod.Spec.NodeSelector) + len(pod.Spec.Tolerations) + len(pod.Spec.Containers)
	if pod.Spec.Affinity != nil {
		n++
	}
	for _, c := range pod.Spec.Containers {
		n += len(c.Resources.Requests)
	}
	evictSink += byte(n)
}

// BenchmarkNoRuleInCycle times the no-rule path the way the framework does,
// against in-tree NodeAffinity when both skip, in the same iterations: per
// cycle a fresh CycleState that other plugins wrote to, each PreFilter and
// PreScore call timed on its own (as runPreFilterPlugin does for
// scheduler_plugin_execution_duration_seconds), and, with cold=true, the
// caches evicted before each call, then the pod read as other plugins read
// it; with cold=metadata only its spec (touchSpec), as in a scheduler where
// no plugin before ours reads a pod's labels. The custom metrics are the median ns of a call.
func BenchmarkNoRuleInCycle(b *testing.B) {
	_, ctx := ktesting.NewTestContext(b)
	// The measured pods of scheduler_perf's PlacementPolicyNoRule test case.
	pod := st.MakePod().Name("pod-x").Namespace("service-ns").Label("app", "scheduler-perf").
		Req(map[v1.ResourceName]string{v1.ResourceCPU: "100m", v1.ResourceMemory: "500Mi"}).Obj()
	perfRules := func(a *config.PlacementPolicyArgs) { // config-g-placementpolicy-norule.yaml
		a.Rules = []config.PlacementRule{
			{Name: "eu-only", PodSelector: selector("placement", "eu"), NodeSelector: selector(regionKey, "eu-west-1"), Action: config.PlacementRequire},
			{Name: "prefer-eu-west", Namespaces: []string{"payments"}, NodeSelector: selector(regionKey, "eu-west-1"), Action: config.PlacementPrefer, Weight: 10},
		}
	}
	nsRules := func(a *config.PlacementPolicyArgs) { // the same with a namespaceSelector rule
		perfRules(a)
		a.Rules = append(a.Rules, config.PlacementRule{Name: "residency-by-label", NamespaceSelector: selector("data-residency", "eu"),
			NodeSelector: selector(regionKey, "eu-west-1"), Action: config.PlacementRequire})
	}
	na, err := nodeaffinity.New(ctx, &schedconfig.NodeAffinityArgs{}, nil, feature.Features{})
	if err != nil {
		b.Fatal(err)
	}
	otherKeys := make([]fwk.StateKey, 8)
	for i := range otherKeys {
		otherKeys[i] = fwk.StateKey(fmt.Sprintf("PreFilter%d", i))
	}
	for _, rules := range []struct {
		name   string
		mutate func(*config.PlacementPolicyArgs)
	}{{"rules=perf", perfRules}, {"rules=namespaceSelector", nsRules}} {
		for _, cold := range []string{"false", "true", "metadata"} {
			b.Run(fmt.Sprintf("%s/cold=%s", rules.name, cold), func(b *testing.B) {
				pl := newPlugin(b, testArgs(rules.mutate), namespace("service-ns"), namespace("payments"))
				plugins := []struct {
					name string
					pf   fwk.PreFilterPlugin
					ps   fwk.PreScorePlugin
				}{{"NodeAffinity", na.(fwk.PreFilterPlugin), na.(fwk.PreScorePlugin)}, {"PlacementPolicy", pl, pl}}
				preFilter := make([][]time.Duration, len(plugins))
				preScore := make([][]time.Duration, len(plugins))
				call := func(f func()) time.Duration {
					switch cold {
					case "true":
						evictCaches()
						touchPod(pod)
					case "metadata":
						evictCaches()
						touchSpec(pod)
					}
					start := time.Now()
					f()
					return time.Since(start)
				}
				b.ReportAllocs()
				for b.Loop() {
					state := framework.NewCycleState()
					state.SetRecordPluginMetrics(true)
					for _, k := range otherKeys {
						state.Write(k, skipState{})
					}
					for i, p := range plugins {
						preFilter[i] = append(preFilter[i], call(func() {
							if _, s := p.pf.PreFilter(ctx, state, pod, nil); !s.IsSkip() {
								b.Fatalf("%s PreFilter: %v", p.name, s)
							}
						}))
					}
					for i, p := range plugins {
						preScore[i] = append(preScore[i], call(func() {
							if s := p.ps.PreScore(ctx, state, pod, nil); !s.IsSkip() {
								b.Fatalf("%s PreScore: %v", p.name, s)
							}
						}))
					}
				}
				for i, p := range plugins {
					b.ReportMetric(median(preFilter[i]), p.name+"-PreFilter-p50-ns")
					b.ReportMetric(median(preScore[i]), p.name+"-PreScore-p50-ns")
				}
			})
		}
	}
}

// median is robust to the preemptions of a loaded machine, which a mean of
// calls of some 100 ns is not.
func median(d []time.Duration) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[len(s)/2].Nanoseconds())
}

// skipState stands for what other plugins write to the CycleState.
type skipState struct{}

func (skipState) Clone() fwk.StateData { return skipState{} }
