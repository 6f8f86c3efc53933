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

// Pod groups exist since 1.36.

package integration

// The plugin scenarios again, with pod groups: the scheduler runs with the
// GenericWorkload gate (enablePodGroupScheduling), so the pods of a PodGroup
// with a gang policy are scheduled together in one pod-group cycle: each
// member is assumed into the cycle's snapshot (AssumePod, which keeps the
// NodeInfo's generation) and reserved in turn, and if the gang cannot reach
// its minCount every member is unreserved and forgotten again. None of these
// tests may be parallel: the gate is process-wide.

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	v1config "github.com/adminsched/scheduler-plugins/apis/config/v1"
	"github.com/adminsched/scheduler-plugins/internal/testconfig"
)

// existingPods returns the bound pods that put n pods on each node.
func existingPods(perNode map[string]int) []boundPod {
	var pods []boundPod
	for _, node := range slices.Sorted(maps.Keys(perNode)) {
		for range perNode[node] {
			pods = append(pods, boundPod{node: node})
		}
	}
	return pods
}

// sortedCounts returns the values of counts, sorted.
func sortedCounts(counts map[string]int) []int {
	return slices.Sorted(maps.Values(counts))
}

// TestPodGroupNodeLessPods schedules a gang of 3 and one of 5 with each mode.
// A gang's members are counted as they are assumed, one after the other,
// so LeastPods spreads them as it spreads single pods and MostPods packs
// them. Nodes and the pods they already hold:
//
//	LeastPods  a 3, b 3, c 3, d 0: d fills up to 3 first, then the rest spread
//	MostPods   a 10, b 9, c 8, d 0 (consolidation-config.yaml): all on a
func TestPodGroupNodeLessPods(t *testing.T) {
	tests := []struct {
		name          string
		size          int
		mostPods      bool
		existing      map[string]int // by node suffix
		wantGang      map[string]int // by node suffix; nil: see wantTotals
		wantTotals    []int          // every node's pods, sorted
		schedulerName string
	}{
		{name: "LeastPods gang of 3", size: 3, existing: map[string]int{"a": 3, "b": 3, "c": 3},
			wantGang: map[string]int{"a": 0, "b": 0, "c": 0, "d": 3}},
		// d gets 3, then every node holds 3: the last two go to two
		// different nodes, as two single pods would.
		{name: "LeastPods gang of 5", size: 5, existing: map[string]int{"a": 3, "b": 3, "c": 3},
			wantTotals: []int{3, 3, 4, 4}},
		{name: "MostPods gang of 3", size: 3, mostPods: true, existing: map[string]int{"a": 10, "b": 9, "c": 8},
			wantGang: map[string]int{"a": 3, "b": 0, "c": 0, "d": 0}},
		{name: "MostPods gang of 5", size: 5, mostPods: true, existing: map[string]int{"a": 10, "b": 9, "c": 8},
			wantGang: map[string]int{"a": 5, "b": 0, "c": 0, "d": 0}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enablePodGroupScheduling(t)
			tc := newTestContext(t)
			p := fmt.Sprintf("pgn%d", i)
			node := func(suffix string) string { return p + "-" + suffix }
			nodes := tc.createNodes(makeNode(node("a"), withHostnameLabel()), makeNode(node("b"), withHostnameLabel()),
				makeNode(node("c"), withHostnameLabel()), makeNode(node("d"), withHostnameLabel()))
			existing := map[string]int{}
			for s, n := range tt.existing {
				existing[node(s)] = n
			}
			tc.createBoundPods(existingPods(existing)...)

			config, name := nodeLessPodsConfig(&v1config.NodeLessPodsArgs{Mode: v1config.NodeLessPodsLeastPods}), schedulerName
			if tt.mostPods {
				config, name = consolidationConfig(t), consolidatingScheduler
			}
			requireGangScheduling(t, tc.startScheduler(config))
			pods := tc.createGang(gang{name: "gang", size: tt.size, mutate: func(p *v1.Pod) { p.Spec.SchedulerName = name }})
			tc.waitScheduled(pods...)

			gotGang := map[string]int{}
			for n, c := range tc.gangPerNode(nodes, "gang") {
				gotGang[strings.TrimPrefix(n, p+"-")] = c
			}
			totals := tc.podsPerNode(nodes, nil)
			t.Logf("gang per node %v; all pods per node %v", gotGang, totals)
			if tt.wantGang != nil {
				if diff := cmp.Diff(tt.wantGang, gotGang); diff != "" {
					t.Errorf("gang members per node (-want +got):\n%s", diff)
				}
			}
			if tt.wantTotals != nil {
				if diff := cmp.Diff(tt.wantTotals, sortedCounts(totals)); diff != "" {
					t.Errorf("pods per node, sorted (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestPodGroupPlacementPolicy checks that a Require rule holds for every
// member of a gang: the EU nodes are the busier ones, so the resource
// scores alone would send pods to the US nodes.
func TestPodGroupPlacementPolicy(t *testing.T) {
	enablePodGroupScheduling(t)
	tc := newTestContext(t)
	eu := []string{"pgp-eu-1", "pgp-eu-2"}
	nodes := tc.createNodes(
		makeNode(eu[0], withLabels(map[string]string{regionLabel: "eu-west-1"})),
		makeNode(eu[1], withLabels(map[string]string{regionLabel: "eu-central-1"})),
		makeNode("pgp-us-1", withLabels(map[string]string{regionLabel: "us-east-1"})),
		makeNode("pgp-us-2", withLabels(map[string]string{regionLabel: "us-east-1"})),
	)
	tc.createBoundPods(existingPods(map[string]int{eu[0]: 2, eu[1]: 2})...)
	requireGangScheduling(t, tc.startScheduler(placementConfig(1, tc.euResidency())))
	for _, size := range []int{3, 5} {
		name := fmt.Sprintf("gang-%d", size)
		pods := tc.createGang(gang{name: name, size: size})
		for pod, node := range tc.waitScheduled(pods...) {
			if !slices.Contains(eu, node) {
				t.Errorf("gang %s: pod %s landed on %s, outside the EU nodes %v", name, pod, node, eu)
			}
		}
		t.Logf("gang %s per node: %v", name, tc.gangPerNode(nodes, name))
	}
}

// TestPodGroupMaintenanceWindow checks that no member of a gang lands on a
// node in an open window, though it is the emptiest node.
func TestPodGroupMaintenanceWindow(t *testing.T) {
	enablePodGroupScheduling(t)
	tc := newTestContext(t)
	nodes := tc.createNodes(makeNode("pgm-open", withWindow(windowFrom(-time.Hour, time.Hour))), makeNode("pgm-a"), makeNode("pgm-b"))
	tc.createBoundPods(existingPods(map[string]int{"pgm-a": 2, "pgm-b": 2})...)
	requireGangScheduling(t, tc.startScheduler(maintenanceConfig()))
	for _, size := range []int{3, 5} {
		name := fmt.Sprintf("gang-%d", size)
		pods := tc.createGang(gang{name: name, size: size})
		for pod, node := range tc.waitScheduled(pods...) {
			if node == "pgm-open" {
				t.Errorf("gang %s: pod %s landed on pgm-open, which is in a maintenance window", name, pod)
			}
		}
		t.Logf("gang %s per node: %v", name, tc.gangPerNode(nodes, name))
	}
}

// TestPodGroupOnDemandShare runs a gang of 5 undecided pods of one
// Deployment (its pod template names the PodGroup) under the OnDemandShare
// guard at 30%, with neither the admission policy nor the controller: the
// pod-group cycle assumes the members in turn, and the guard counts those
// assumed on on-demand nodes, so at least 2 of 5 end on-demand although
// every pod prefers spot.
func TestPodGroupOnDemandShare(t *testing.T) {
	enablePodGroupScheduling(t)
	tc := newTestContext(t)
	pool := withLabels(map[string]string{"pool": tc.ns})
	for _, class := range []string{"on-demand", "spot"} {
		for i := range 2 {
			tc.createNodes(makeNode(fmt.Sprintf("pgo-%s-%d-%s", class, i, tc.ns[len(tc.ns)-5:]), pool, withLabels(map[string]string{capacityTypeLabel: class})))
		}
	}
	requireGangScheduling(t, tc.startScheduler(tc.guardConfig("gang")))
	tc.createGang(gang{name: "gang", size: 0, minCount: 5})
	r := &shareRun{tc: tc}
	d := r.deployment("gang", 5)
	d.Spec.Template.Spec.NodeSelector = map[string]string{"pool": tc.ns}
	d.Spec.Template.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: ptr.To("gang")}
	preferSpot(&d.Spec.Template.Spec)
	if _, err := adminClient.AppsV1().Deployments(tc.ns).Create(tc.ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	st := r.guarded(t, "gang", 5)
	pods, err := adminClient.CoreV1().Pods(tc.ns).List(tc.ctx, metav1.ListOptions{LabelSelector: "app=gang"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.SchedulingGroup == nil {
			t.Fatalf("pod %s lost its spec.schedulingGroup: it was not scheduled as a gang member", p.Name)
		}
	}
	t.Logf("gang: %d of 5 pods on-demand", st.onDemand)
	if st.onDemand < 2 {
		t.Errorf("gang: %d of 5 pods on on-demand nodes, want at least 2 (30%%, rounded up)", st.onDemand)
	}
}

// bigCPU makes a pod request 3 of a node's 8 CPUs and run only on nodes
// labelled pool=big.
func bigCPU(p *v1.Pod) {
	p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("3")
	p.Spec.NodeSelector = map[string]string{"pool": "big"}
}

// TestPodGroupRevertedGangLeavesCountsAlone runs a gang that cannot reach
// its minCount: 4 pods of 3 CPUs that may only run on <p>-c (8 CPUs, 2 of
// them fit). Its first two members are assumed and reserved on <p>-c, the
// third fits nowhere, and both are unreserved and forgotten again, cycle
// after cycle while the gang waits. NodeLessPods (LeastPods) must then count
// <p>-c as it is, empty: with <p>-a and <p>-b holding one pod each, the next
// pod goes to <p>-c, and a gang of 3 after it puts one member on each node.
// Had the reverted members stayed counted, <p>-c would hold the most pods.
func TestPodGroupRevertedGangLeavesCountsAlone(t *testing.T) {
	enablePodGroupScheduling(t)
	tc := newTestContext(t)
	const p = "pgr"
	nodes := tc.createNodes(makeNode(p+"-a"), makeNode(p+"-b"),
		makeNode(p+"-c", withLabels(map[string]string{"pool": "big"})))
	tc.createBoundPods(existingPods(map[string]int{p + "-a": 1, p + "-b": 1})...)
	requireGangScheduling(t, tc.startScheduler(nodeLessPodsConfig(&v1config.NodeLessPodsArgs{Mode: v1config.NodeLessPodsLeastPods})))

	tooBig := tc.createGang(gang{name: "too-big", size: 4, mutate: bigCPU})
	msg := tc.waitGangUnschedulable("too-big", tooBig)
	t.Logf("gang too-big: %s", msg)

	next := tc.createPod(tc.makePod("next")).Name
	if got := tc.waitScheduled(next)[next]; got != p+"-c" {
		t.Errorf("pod %s landed on %s, want %s-c, the node with the fewest pods once the gang's members are forgotten (pods per node %v)",
			next, got, p, tc.podsPerNode(nodes, nil))
	}
	after := tc.createGang(gang{name: "after", size: 3})
	tc.waitScheduled(after...)
	want := map[string]int{p + "-a": 1, p + "-b": 1, p + "-c": 1}
	if diff := cmp.Diff(want, tc.gangPerNode(nodes, "after")); diff != "" {
		t.Errorf("gang after: members per node (-want +got):\n%s\nall pods per node: %v", diff, tc.podsPerNode(nodes, nil))
	}
	// The failed gang is still all or nothing.
	tc.waitGangUnschedulable("too-big", tooBig)
}

// TestPodGroupPreemption runs a high-priority gang that fits only once
// lower-priority pods are preempted: DefaultPreemption's PodGroupPostFilter
// runs the gang's cycle again as a dry run on clones of the snapshot's
// NodeInfos (StartMutations, EndMutations), assuming, reserving and
// reverting its members there, then evicts the victims, and the gang binds
// once they are gone. The gang's 2 members (5 CPUs each) may run only on
// <p>-a and <p>-b (pool=gang, 8 CPUs), each holding a 6-CPU low-priority
// pod; <p>-c holds 2 small pods. After the gang, NodeLessPods (LeastPods)
// must count what the nodes hold, 1, 1 and 2: the next pod goes to <p>-a or
// <p>-b. Had the dry run's members stayed counted, all three would hold 2
// and the resource scores would send it to <p>-c, the emptiest.
func TestPodGroupPreemption(t *testing.T) {
	enablePodGroupScheduling(t)
	tc := newTestContext(t)
	const p = "pgx"
	gangPool := map[string]string{"pool": "gang"}
	nodes := tc.createNodes(makeNode(p+"-a", withLabels(gangPool)), makeNode(p+"-b", withLabels(gangPool)),
		makeNode(p+"-c"))
	victims := []string{"victim-a", "victim-b"}
	for i, name := range victims {
		victim := tc.makePod(name)
		victim.Spec.NodeName = nodes[i]
		victim.Spec.SchedulerName = "default-scheduler"
		victim.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("6")
		tc.createPod(victim)
	}
	tc.createBoundPods(existingPods(map[string]int{p + "-c": 2})...)
	requireGangScheduling(t, tc.startScheduler(nodeLessPodsConfig(&v1config.NodeLessPodsArgs{Mode: v1config.NodeLessPodsLeastPods})))

	pods := tc.createGang(gang{name: "urgent", size: 2, priority: 1000, mutate: func(p *v1.Pod) {
		p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("5")
		p.Spec.NodeSelector = gangPool
	}})
	placed := tc.waitScheduled(pods...)
	want := map[string]int{p + "-a": 1, p + "-b": 1, p + "-c": 0}
	if diff := cmp.Diff(want, tc.gangPerNode(nodes, "urgent")); diff != "" {
		t.Errorf("gang urgent: members per node (-want +got):\n%s", diff)
	}
	for _, name := range victims {
		if pod, err := adminClient.CoreV1().Pods(tc.ns).Get(tc.ctx, name, metav1.GetOptions{}); err == nil && pod.DeletionTimestamp == nil {
			t.Errorf("victim %s on %s was not preempted, yet the gang is bound: %v", name, pod.Spec.NodeName, placed)
		}
	}

	next := tc.createPod(tc.makePod("next")).Name
	if got := tc.waitScheduled(next)[next]; got == p+"-c" {
		t.Errorf("pod %s landed on %s, want %s-a or %s-b, the nodes with the fewest pods (pods per node %v)",
			next, got, p, p, tc.podsPerNode(nodes, nil))
	}
}

// TestPodGroupMaintenanceWindowEndRetriesGang checks that a gang rejected
// because its nodes are in a maintenance window is scheduled once the
// window ends, far sooner than the scheduler's unschedulable flush (5
// minutes). No cluster event marks the end. In v1.37.2 a rejected pod group
// does not wait among the unschedulable pods: the queue puts it back in the
// backoff queue (AddAttemptedPodGroupIfNeeded), so with the default backoff
// (1 s doubling to 10 s) it is retried within about 10 s of the end even
// without the plugin's retry; TestPodGroupMaintenanceWindowEndBeatsBackoff
// checks the retry itself.
func TestPodGroupMaintenanceWindowEndRetriesGang(t *testing.T) {
	runWindowEndGang(t, "pgw", maintenanceConfig(), 60*time.Second)
}

// TestPodGroupMaintenanceWindowEndBeatsBackoff is
// TestPodGroupMaintenanceWindowEndRetriesGang with a backoff of 30 s, longer
// than the window has left: only a retry at the window's end (the plugin
// activating the gang's members, as it does for single pods) binds the gang
// within a few seconds of it. In a pod-group cycle the per-pod PostFilter
// does not run, so the retry cannot be armed there.
func TestPodGroupMaintenanceWindowEndBeatsBackoff(t *testing.T) {
	config := maintenanceConfig()
	config.PodInitialBackoffSeconds, config.PodMaxBackoffSeconds = ptr.To[int64](30), ptr.To[int64](30)
	runWindowEndGang(t, "pgwb", config, 10*time.Second)
}

// runWindowEndGang puts two nodes, <p>-1 and <p>-2, in a window that ends a
// few seconds from now, starts a scheduler from config, creates a gang of 3,
// checks that the window rejects it, and that it is bound at most allowed
// after the window's end.
func runWindowEndGang(t *testing.T, p string, config *configv1.KubeSchedulerConfiguration, allowed time.Duration) {
	enablePodGroupScheduling(t)
	tc := newTestContext(t)
	// RFC 3339 has whole seconds: the window ends 5 to 6 s from now.
	end := time.Now().UTC().Add(6 * time.Second).Truncate(time.Second)
	window := withWindow(time.Now().UTC().Add(-time.Hour).Format(time.RFC3339) + "/" + end.Format(time.RFC3339))
	tc.createNodes(makeNode(p+"-1", window), makeNode(p+"-2", window))
	sched := tc.startScheduler(config)
	requireGangScheduling(t, sched)
	cc := sched.Config.ComponentConfig
	t.Logf("backoff %d s doubling to %d s", cc.PodInitialBackoffSeconds, cc.PodMaxBackoffSeconds)
	pods := tc.createGang(gang{name: "gang", size: 3})
	tc.waitFailedSchedulingContaining("maintenance window until " + end.Format(time.RFC3339))
	if time.Now().After(end) {
		t.Fatalf("the gang was rejected only after its window ended at %s: the test cannot tell a retry from a first attempt", end.Format(time.RFC3339))
	}
	_, bound := tc.waitScheduledBy(end.Add(allowed), pods...)
	t.Logf("gang bound %v after its window ended", bound.Sub(end).Round(100*time.Millisecond))
}

// TestPodGroupSwap checks that NodeLessPods counts a node as it is when a
// pod-group cycle has reverted a counted pod there and another, not
// counted, takes its place without the node being scored in between: the
// node then holds as many pods, with the same generation, as when it was
// last scored. Nodes: <p>-n (pool=n) holds one counted pod of 3 CPUs, <p>-m
// two counted pods of 0.1 CPU. Gang "reverted" (counted): its first member
// may only run on <p>-n, its second anywhere, its third nowhere, so each
// attempt assumes the first on <p>-n, scores <p>-n with it (2 counted, a
// tie with <p>-m that the emptier <p>-m wins), and reverts both. Gang
// "swap" (not counted) then puts its first member on <p>-n without scoring
// (the only node it may use). Its second member must see 1 against 2 and go
// to <p>-n; a count that kept the reverted member sees a tie and sends it
// to <p>-m. Two ways to miss the revert:
//
//   - NodeLessPods at score only, as the tutorial's profile has it: no
//     Reserve or Unreserve tells it of the pods a pod-group cycle assumes
//     and reverts;
//   - NodeLessPods at multiPoint after a pod-group preemption dry run, which
//     scores clones of the NodeInfos: gang "dry-run" (higher priority, not
//     counted, one member anywhere and one nowhere) runs one before
//     "reverted" and is deleted.
func TestPodGroupSwap(t *testing.T) {
	// NodeLessPods enabled as plugins says, counting the pods labelled counted=yes.
	nodeLessPods := func(plugins configv1.Plugins) *configv1.KubeSchedulerConfiguration {
		p := profile("NodeLessPods", 3, &v1config.NodeLessPodsArgs{
			Mode:        v1config.NodeLessPodsLeastPods,
			PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"counted": "yes"}},
		})
		p.Plugins = &plugins
		return schedulerConfig(p)
	}
	pinned := func(pool string) func(*v1.Pod) {
		return func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"pool": pool} }
	}
	tests := []struct {
		name   string
		prefix string
		config *configv1.KubeSchedulerConfiguration
		dryRun bool
	}{
		{name: "score only", prefix: "pgs", config: nodeLessPods(configv1.Plugins{Score: testconfig.Plugins(3, "NodeLessPods")})},
		{name: "after a preemption dry run", prefix: "pgd", config: nodeLessPods(configv1.Plugins{MultiPoint: testconfig.Plugins(3, "NodeLessPods")}), dryRun: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enablePodGroupScheduling(t)
			tc := newTestContext(t)
			p := tt.prefix
			nodes := tc.createNodes(makeNode(p+"-n", withLabels(map[string]string{"pool": "n"})), makeNode(p+"-m"))
			counted := map[string]string{"counted": "yes"}
			heavy := tc.makePod("existing-heavy")
			heavy.Labels = counted
			heavy.Spec.NodeName = p + "-n"
			heavy.Spec.SchedulerName = "default-scheduler"
			heavy.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("3")
			tc.createPod(heavy)
			tc.createBoundPods(boundPod{node: p + "-m", labels: counted}, boundPod{node: p + "-m", labels: counted})
			requireGangScheduling(t, tc.startScheduler(tt.config))

			if tt.dryRun {
				// Priority above the bound pods': they are candidate
				// victims, so the dry run runs.
				dry := tc.createGang(gang{name: "dry-run", size: 2, priority: 100, mutate: func(pod *v1.Pod) {
					if pod.Name == "dry-run-1" {
						pinned("nowhere")(pod)
					}
				}})
				t.Logf("gang dry-run: %s", tc.waitGangUnschedulable("dry-run", dry))
				for _, n := range dry {
					tc.deletePod(tc.ns, n)
				}
			}
			reverted := tc.createGang(gang{name: "reverted", size: 3, mutate: func(pod *v1.Pod) {
				pod.Labels["counted"] = "yes"
				switch pod.Name {
				case "reverted-0":
					pinned("n")(pod)
				case "reverted-2":
					pinned("nowhere")(pod)
				}
			}})
			tc.waitGangUnschedulable("reverted", reverted)

			swap := tc.createGang(gang{name: "swap", size: 2, mutate: func(pod *v1.Pod) {
				if pod.Name == "swap-0" {
					pinned("n")(pod)
				}
			}})
			placed := tc.waitScheduled(swap...)
			if placed["swap-1"] != p+"-n" {
				t.Errorf("swap-1 landed on %s, want %s-n, which holds 1 counted pod against 2 (placed %v, pods per node %v)",
					placed["swap-1"], p, placed, tc.podsPerNode(nodes, nil))
			}
		})
	}
}
