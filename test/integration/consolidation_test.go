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

package integration

import (
	"fmt"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	configv1 "k8s.io/kube-scheduler/config/v1"
)

const (
	consolidationConfigFile = "../../manifests/nodelesspods/consolidation-config.yaml"
	consolidatingScheduler  = "consolidating-scheduler"
)

// profileEdit changes the first profile of a config.
type profileEdit func(profile *configv1.KubeSchedulerProfile) error

// consolidationConfig returns the shipped consolidation-config.yaml, after
// edits, pointed at the test API server with leader election off.
func consolidationConfig(t *testing.T, edits ...profileEdit) *configv1.KubeSchedulerConfiguration {
	t.Helper()
	cfg := shippedConfig(t, consolidationConfigFile)
	if len(cfg.Profiles) == 0 {
		t.Fatalf("%s: no profiles", consolidationConfigFile)
	}
	for _, edit := range edits {
		if err := edit(&cfg.Profiles[0]); err != nil {
			t.Fatalf("%s: %v", consolidationConfigFile, err)
		}
	}
	return cfg
}

// withoutPluginConfig drops the pluginConfig entry of a plugin: it runs with
// its default args.
func withoutPluginConfig(name string) profileEdit {
	return func(profile *configv1.KubeSchedulerProfile) error {
		i := slices.IndexFunc(profile.PluginConfig, func(c configv1.PluginConfig) bool { return c.Name == name })
		if i < 0 {
			return fmt.Errorf("pluginConfig: no entry named %s", name)
		}
		profile.PluginConfig = slices.Delete(profile.PluginConfig, i, i+1)
		return nil
	}
}

// reenable takes a default plugin off plugins.multiPoint.disabled.
func reenable(name string) profileEdit {
	return func(profile *configv1.KubeSchedulerProfile) error {
		var disabled []configv1.Plugin
		if profile.Plugins != nil {
			disabled = profile.Plugins.MultiPoint.Disabled
		}
		i := slices.IndexFunc(disabled, func(p configv1.Plugin) bool { return p.Name == name })
		if i < 0 {
			return fmt.Errorf("plugins.multiPoint.disabled: no entry named %s", name)
		}
		profile.Plugins.MultiPoint.Disabled = slices.Delete(disabled, i, i+1)
		return nil
	}
}

// createService creates a Service that selects the pods labelled app=name.
// With the ReplicaSet that owns them, it is what gives those pods
// PodTopologySpread's system default constraints.
func (tc *testContext) createService(name string) {
	tc.t.Helper()
	svc := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tc.ns},
		Spec: v1.ServiceSpec{
			Selector: map[string]string{"app": name},
			Ports:    []v1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	if _, err := adminClient.CoreV1().Services(tc.ns).Create(tc.ctx, svc, metav1.CreateOptions{}); err != nil {
		tc.t.Fatalf("creating Service %s: %v", name, err)
	}
}

// TestConsolidation runs one Deployment-like workload, 6 replicas of 1 CPU
// owned by a ReplicaSet and selected by a Service. Nodes (8 CPUs each) and
// the pods they already hold:
//
//	<p>-a     10 pods  the busiest node with room
//	<p>-b      9 pods
//	<p>-c      8 pods
//	<p>-d      empty
//	<p>-full  12 pods, its allocatable pods: the busiest, but no room
//
// The shipped file without its PodTopologySpread args spreads them over a, b
// and c: PodTopologySpread's system defaults are what the file has to turn
// off. The shipped file itself packing every replica on the busiest node
// that fits, and MostPods next to the default plugins spreading them, are
// internal/playground's TestPlayScenarios (consolidation row), on
// examples/scenarios/consolidation.yaml.
func TestConsolidation(t *testing.T) {
	const replicas = 6
	spread := func(t *testing.T, prefix string, got map[string]int) {
		if got[prefix+"-a"] == replicas || got[prefix+"-full"] > 0 {
			t.Errorf("replicas per node %v: want them spread over more than one node, none on %s-full", got, prefix)
		}
	}
	tests := []struct {
		name          string
		prefix        string
		config        *configv1.KubeSchedulerConfiguration
		schedulerName string
		check         func(t *testing.T, prefix string, got map[string]int)
	}{
		{
			name:          "consolidation-config.yaml without its PodTopologySpread args",
			prefix:        "nodefaults",
			config:        consolidationConfig(t, withoutPluginConfig("PodTopologySpread")),
			schedulerName: consolidatingScheduler,
			check:         spread,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc := newTestContext(t)
			p := tt.prefix
			nodes := tc.createNodes(makeNode(p+"-a", withHostnameLabel()), makeNode(p+"-b", withHostnameLabel()), makeNode(p+"-c", withHostnameLabel()),
				makeNode(p+"-d", withHostnameLabel()), makeNode(p+"-full", withHostnameLabel(), withPods(12)))
			var existing []boundPod
			for node, n := range map[string]int{p + "-a": 10, p + "-b": 9, p + "-c": 8, p + "-full": 12} {
				for range n {
					existing = append(existing, boundPod{node: node})
				}
			}
			tc.createBoundPods(existing...)
			tc.createService("web")
			names := tc.createReplicaSetPods("web", replicas, func(t *v1.PodTemplateSpec) {
				t.Spec.SchedulerName = tt.schedulerName
				t.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("1")
			})
			// Started once the Service and the ReplicaSet exist, so that its
			// informers hold them when it scores the first replica.
			sched := tc.startScheduler(tt.config)
			if tt.schedulerName == consolidatingScheduler {
				le := sched.Config.ComponentConfig.LeaderElection
				if le.ResourceName != consolidatingScheduler || le.ResourceNamespace != "kube-system" {
					t.Errorf("lease %s/%s, want kube-system/%s: a lease of its own", le.ResourceNamespace, le.ResourceName, consolidatingScheduler)
				}
			}
			tc.waitScheduled(names...)
			got := tc.podsPerNode(nodes, func(pod *v1.Pod) bool { return pod.Labels["app"] == "web" })
			t.Logf("replicas per node: %v; all pods per node: %v", got, tc.podsPerNode(nodes, nil))
			tt.check(t, p, got)
		})
	}
}

// TestConsolidationBreaksTiesByResources shows what the other two choices of
// consolidation-config.yaml do. Two nodes (8 CPUs, 32Gi) hold 2 pods each, so
// NodeLessPods scores them alike and the resource scorers decide where a pod
// of 3.5 CPUs goes:
//
//	<p>-cpu     4.5 CPUs and 2Gi requested: the fuller node; the pod fills its CPU
//	<p>-memory  0.5 CPU and 16Gi
//
// MostAllocated (53 against 50) sends it to <p>-cpu. LeastAllocated, the
// default, sends it to <p>-memory, and so does BalancedAllocation next to
// MostAllocated: it scores how much the pod evens out a node's CPU and memory
// shares, 64 against 85 here, and outweighs the fuller node.
func TestConsolidationBreaksTiesByResources(t *testing.T) {
	tests := []struct {
		name   string
		prefix string
		config *configv1.KubeSchedulerConfiguration
		want   string // node suffix
	}{
		{name: "consolidation-config.yaml", prefix: "tie", config: consolidationConfig(t), want: "-cpu"},
		{name: "without MostAllocated", prefix: "least", config: consolidationConfig(t, withoutPluginConfig("NodeResourcesFit")), want: "-memory"},
		{name: "with BalancedAllocation", prefix: "balanced", config: consolidationConfig(t, reenable("NodeResourcesBalancedAllocation")), want: "-memory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc := newTestContext(t)
			cpuNode, memoryNode := tt.prefix+"-cpu", tt.prefix+"-memory"
			tc.createNodes(makeNode(cpuNode), makeNode(memoryNode))
			for i, bp := range []struct {
				node, cpu, memory string
			}{
				{cpuNode, "4400m", "1Gi"}, {cpuNode, "100m", "1Gi"},
				{memoryNode, "250m", "8Gi"}, {memoryNode, "250m", "8Gi"},
			} {
				pod := tc.makePod(fmt.Sprintf("existing-%d", i))
				pod.Spec.NodeName = bp.node
				pod.Spec.SchedulerName = "default-scheduler"
				pod.Spec.Containers[0].Resources.Requests = v1.ResourceList{
					v1.ResourceCPU:    resource.MustParse(bp.cpu),
					v1.ResourceMemory: resource.MustParse(bp.memory),
				}
				tc.createPod(pod)
			}
			tc.startScheduler(tt.config)
			pod := tc.makePod("new-pod")
			pod.Spec.SchedulerName = consolidatingScheduler
			pod.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("3500m")
			tc.createPod(pod)
			if got := tc.waitScheduled(pod.Name)[pod.Name]; got != tt.prefix+tt.want {
				t.Errorf("the new pod landed on %s, want %s", got, tt.prefix+tt.want)
			}
		})
	}
}
