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

package playground

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/adminsched/scheduler-plugins/internal/localcluster"
	"github.com/adminsched/scheduler-plugins/internal/playground/report"
	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

const (
	consolidationConfig = "../../manifests/nodelesspods/consolidation-config.yaml"
	maintenanceConfig   = "../../manifests/maintenancewindow/scheduler-config.yaml"
)

// TestPlayScenarios runs scenarios through Play, each with the configs its
// header (or the README) names, and checks the runs' results: the plugins'
// behaviour as a user sees it.
func TestPlayScenarios(t *testing.T) {
	tests := []struct {
		name     string
		scenario string
		configs  []string
		timeout  time.Duration
		explain  bool
		// admission is Options.AdmissionPolicies.
		admission bool
		// needs is what the scenario needs of the minor.
		needs *kubeversion.Feature
		check func(t *testing.T, runs []report.Run, progress string)
	}{
		{name: "tutorial then the default profile", scenario: tutorial, configs: []string{shippedConfig, defaultProfile}, check: checkTutorial},
		{name: "consolidation then MostPods next to the defaults", scenario: scenarios + "consolidation.yaml",
			configs: []string{consolidationConfig, scenarios + "mostpods-config.yaml"}, check: checkConsolidation},
		{name: "weights 1 and 3", scenario: scenarios + "weights.yaml",
			configs: []string{scenarios + "leastpods-weight-1-config.yaml", shippedConfig}, check: checkWeights},
		{name: "maintenance", scenario: scenarios + "maintenance.yaml", configs: []string{maintenanceConfig}, check: checkMaintenance},
		{name: "maintenance look-ahead then runtimeAware off", scenario: scenarios + "maintenance-lookahead.yaml",
			configs: []string{lookaheadConfig, lookaheadOffConfig}, explain: true, check: checkMaintenanceLookahead},
		{name: "placement", scenario: scenarios + "placement.yaml", configs: []string{scenarios + "placement-config.yaml"}, check: checkPlacement},
		{name: "repack with consolidation then the default profile", scenario: scenarios + "repack.yaml",
			configs: []string{consolidationConfig, defaultProfile}, check: checkRepack},
		{name: "zero replicas", scenario: "testdata/zero-replicas.yaml", configs: []string{shippedConfig}, timeout: 2 * time.Minute, check: checkZeroReplicas},
		{name: "any kind", scenario: "testdata/any-kind.yaml", configs: []string{shippedConfig}, check: checkAnyKind},
		{name: "spot nodes deleted", scenario: "testdata/delete-nodes.yaml", configs: []string{shippedConfig}, check: checkDeleteNodes},
		{name: "license seats then the default profile", scenario: scenarios + "licenses.yaml",
			configs: []string{shippedConfig, defaultProfile}, timeout: 2 * time.Minute, needs: &kubeversion.DRAExtendedResource, check: checkLicenses},
		{name: "seats waiting", scenario: "testdata/seats-waiting.yaml", configs: []string{shippedConfig}, explain: true, needs: &kubeversion.DRAExtendedResource, check: checkSeatsWaiting},
		{name: "shared seats", scenario: "testdata/seats-shared.yaml", configs: []string{shippedConfig}, explain: true, needs: &kubeversion.DRAExtendedResource, check: checkSharedSeats},
		{name: "on-demand share with the controller", scenario: scenarios + "ondemand-share.yaml", configs: []string{scenarios + "ondemand-share-config.yaml"},
			admission: true, check: checkOnDemandShare},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.needs != nil && !kubeversion.Has(*tt.needs) {
				// Its pods ask for seats in resources.limits.
				t.Skipf("%s", kubeversion.Unavailable(*tt.needs).Error())
			}
			s, progress := play(t, Options{Scenario: loadScenario(t, tt.scenario), Configs: tt.configs, Timeout: tt.timeout, Explain: tt.explain, AdmissionPolicies: tt.admission})
			tt.check(t, s.Results(), progress)
		})
	}
}

// checkTutorial: the tutorial as README.md and make demo run it, the
// shipped config on examples/scenarios/tutorial.yaml. On 3 nodes,
// test-pod-1 and test-pod-2 (each bound before the next object is created)
// land on different nodes, then the 5 replicas of the Deployment spread so
// that no two nodes differ by more than one pod, replicas alone or all pods.
// With the default profile too, all 7 pods are bound on the 3 nodes.
func checkTutorial(t *testing.T, runs []report.Run, _ string) {
	r := runs[0].Result
	nodes := nodeOf(r)
	if nodes["test-pod-1"] == "" || nodes["test-pod-1"] == nodes["test-pod-2"] {
		t.Errorf("test-pod-1 on %q, test-pod-2 on %q: want two different nodes", nodes["test-pod-1"], nodes["test-pod-2"])
	}
	replicas := map[string]int{"tutorial-1": 0, "tutorial-2": 0, "tutorial-3": 0}
	n := 0
	for _, p := range r.Pods {
		if strings.HasPrefix(p.Name, "test-deployment-") {
			n++
			if _, ok := replicas[p.Node]; !ok {
				t.Errorf("replica %s on %q, want a tutorial node", p.Name, p.Node)
			}
			replicas[p.Node]++
		}
	}
	var counts []int
	for _, c := range replicas {
		counts = append(counts, c)
	}
	if n != 5 || report.Spread(counts) > 1 {
		t.Errorf("replicas per node %v (%d replicas): want 5 with a spread of at most 1", replicas, n)
	}
	if r.Spread > 1 {
		t.Errorf("spread %d, want at most 1", r.Spread)
	}
	for i, run := range runs {
		if len(run.Result.Pods) != 7 || len(run.Result.Nodes) != 3 {
			t.Errorf("run %d: %d pods on %d nodes, want 7 on 3", i+1, len(run.Result.Pods), len(run.Result.Nodes))
		}
		for _, p := range run.Result.Pods {
			if p.Node == "" {
				t.Errorf("run %d: pod %s not bound: %s", i+1, p.Name, p.Reason)
			}
		}
		checkTutorialNodes(t, i, run.Result.Nodes)
	}
}

// checkTutorialNodes: each node's facts are the node's: its allocatable
// (8 CPUs, 32Gi) and labels, and the requests of its pods (100m and 64Mi
// each).
func checkTutorialNodes(t *testing.T, run int, nodes []report.NodeResult) {
	t.Helper()
	for _, n := range nodes {
		want := report.NodeResult{Name: n.Name, Pods: n.Pods, Labels: n.Labels,
			CPU:    report.Use{Requested: 100 * int64(n.Pods), Allocatable: 8000},
			Memory: report.Use{Requested: 64 << 20 * int64(n.Pods), Allocatable: 32 << 30}}
		if diff := cmp.Diff(want, n); diff != "" {
			t.Errorf("run %d: node %s (-want +got):\n%s", run+1, n.Name, diff)
		}
		if n.Labels[corev1.LabelHostname] != n.Name {
			t.Errorf("run %d: node %s labels %v, want its hostname label among them", run+1, n.Name, n.Labels)
		}
	}
}

// checkConsolidation: the consolidation scenario (a Deployment behind a
// Service) with the shipped consolidation profile packs every replica onto
// consolidation-1, the busiest node that fits; MostPods next to the default
// plugins spreads them.
func checkConsolidation(t *testing.T, runs []report.Run, _ string) {
	packed := runs[0].Result
	if diff := cmp.Diff(map[string]int{"consolidation-1": 6}, replicasPerNode(packed, "web-")); diff != "" {
		t.Errorf("%s: replicas per node, want all 6 on consolidation-1 (the busiest node that fits) (-want +got):\n%s", runs[0].Config, diff)
	}
	want := []report.NodeResult{
		{Name: "consolidation-1", Pods: 16}, {Name: "consolidation-2", Pods: 9}, {Name: "consolidation-3", Pods: 8},
		{Name: "consolidation-4", Pods: 0}, {Name: "consolidation-full", Pods: 12},
	}
	var counts []report.NodeResult
	for _, n := range packed.Nodes {
		counts = append(counts, report.NodeResult{Name: n.Name, Pods: n.Pods})
	}
	if diff := cmp.Diff(want, counts); diff != "" {
		t.Errorf("%s: pods per node (-want +got):\n%s", runs[0].Config, diff)
	}
	spread := replicasPerNode(runs[1].Result, "web-")
	if len(spread) < 2 || spread[""] > 0 || spread["consolidation-full"] > 0 {
		t.Errorf("%s: replicas per node %v, want them bound on 2 nodes or more (the contrast spreads), none on the full node", runs[1].Config, spread)
	}
}

// checkWeights: with NodeLessPods (LeastPods) at weight 1 and at the
// shipped weight 3, the new pod lands where examples/scenarios/weights.yaml
// says, roomy-1 (the resources decide) and nearly-full (the pod count
// decides).
func checkWeights(t *testing.T, runs []report.Run, _ string) {
	for i, want := range []string{"roomy-1", "nearly-full"} {
		if got := nodeOf(runs[i].Result)["new-pod"]; got != want {
			t.Errorf("%s: new-pod on %q, want %s", runs[i].Config, got, want)
		}
	}
}

// checkMaintenance: examples/scenarios/maintenance.yaml with the shipped
// MaintenanceWindow config, as its header shows: web avoids the node being
// drained and gets fewer pods on the node due soonest than on the nodes
// without a window; the exempt kured pod still runs on the drained node.
func checkMaintenance(t *testing.T, runs []report.Run, _ string) {
	perNode := map[string]int{}
	for _, p := range runs[0].Result.Pods {
		switch {
		case p.Node == "":
			t.Errorf("pod %s/%s not scheduled: %s", p.Namespace, p.Name, p.Reason)
		case p.Name == "kured":
			if p.Node != "draining" {
				t.Errorf("kured landed on %s, want draining (it is exempt)", p.Node)
			}
		default:
			perNode[p.Node]++
		}
	}
	if perNode["draining"] != 0 {
		t.Errorf("%d web pods on draining, whose window is open", perNode["draining"])
	}
	if perNode["soon"] >= perNode["steady-1"] || perNode["soon"] >= perNode["steady-2"] {
		t.Errorf("web pods per node %v: want fewer on soon (window in 2h) than on each steady node", perNode)
	}
	t.Logf("web pods per node: %v", perNode)
}

// checkPlacement: examples/scenarios/placement.yaml with its
// PlacementPolicy config, as its header shows: the ledger of payments stays
// in eu-west-1, batch pods land on spot, the critical API never does.
func checkPlacement(t *testing.T, runs []report.Run, _ string) {
	r := runs[0].Result
	if len(r.Pods) != 16 {
		t.Fatalf("%d pods, want 16", len(r.Pods))
	}
	for _, p := range r.Pods {
		if p.Node == "" {
			t.Errorf("pod %s/%s not scheduled: %s", p.Namespace, p.Name, p.Reason)
			continue
		}
		spot := strings.HasPrefix(p.Node, "spot-")
		switch p.Namespace {
		case "payments":
			if strings.HasPrefix(p.Node, "us-") {
				t.Errorf("ledger pod %s landed on %s, outside eu-west-1", p.Name, p.Node)
			}
		case "analytics":
			if !spot {
				t.Errorf("batch pod %s landed on %s, want a spot node", p.Name, p.Node)
			}
		case "web":
			if spot {
				t.Errorf("critical pod %s landed on spot node %s", p.Name, p.Node)
			}
		}
	}
}

func TestTimedOut(t *testing.T) {
	live, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	expired, cancel2 := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel2()
	<-expired.Done()
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want bool
	}{
		{name: "deadline passed", ctx: expired, err: errors.New("anything"), want: true},
		{name: "wrapped DeadlineExceeded", ctx: live, err: fmt.Errorf("creating pod: %w", context.DeadlineExceeded), want: true},
		{name: "rate limiter refusal before the deadline", ctx: live,
			err: errors.New("creating namespace default: client rate limiter Wait returned an error: rate: Wait(n=1) would exceed context deadline"), want: true},
		{name: "API server rejection", ctx: live, err: errors.New("creating Deployment default/web: selector does not match template labels"), want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := timedOut(tc.ctx, tc.err); got != tc.want {
				t.Errorf("timedOut = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestPodsOfDeletedNodeAreRemoved: the cluster runScenario starts is a real
// one there too: as in a real cluster, where
// kube-controller-manager's pod garbage collector deletes the pods of a node
// that is gone, the embedded cluster removes both the pods that ran on a
// deleted node and the pods bound to it in flight, which no kubelet will
// ever start. Without that controller they stayed Running, then
// Terminating, for 20 minutes and more.
func TestPodsOfDeletedNodeAreRemoved(t *testing.T) {
	cp, err := localcluster.Start(assets, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	client, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res := corev1.ResourceList{"cpu": resource.MustParse("4"), "memory": resource.MustParse("16Gi"), "pods": resource.MustParse("110")}
	for _, name := range []string{"gone", "stays"} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
			Status: corev1.NodeStatus{Capacity: res, Allocatable: res,
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}}}
		if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Create the pods once KWOK manages both nodes, as a real node's pods
	// come after its kubelet registers: a CI run that did not wait saw the
	// three pods of one node stay Pending for 3 minutes.
	if _, err := localcluster.WaitNodesManaged(ctx, client, 2*time.Minute, "gone", "stays"); err != nil {
		t.Fatalf("%v (cluster: %v)", err, cp.Err())
	}
	createPod := func(name, node string) {
		t.Helper()
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}}}
		if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		createPod(fmt.Sprintf("ran-%d", i), "gone")
	}
	createPod("other", "stays")
	// Only delete the node once KWOK runs its pods, as a real node's would be.
	var phases []string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		phases = nil
		for _, p := range list.Items {
			phases = append(phases, fmt.Sprintf("%s=%s", p.Name, p.Status.Phase))
		}
		slices.Sort(phases)
		return slices.Equal(phases, []string{"other=Running", "ran-0=Running", "ran-1=Running", "ran-2=Running"}), nil
	})
	if err != nil {
		t.Fatalf("KWOK did not start the pods: %v (pods: %v)", err, phases)
	}
	if err := client.CoreV1().Nodes().Delete(ctx, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	// Bound in flight: the scheduler's binding lands after the node is gone.
	createPod("in-flight-1", "gone")
	createPod("in-flight-2", "gone")

	var left []string
	err = wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		left = nil
		for _, p := range list.Items {
			left = append(left, p.Name+"@"+p.Spec.NodeName)
		}
		slices.Sort(left)
		return slices.Equal(left, []string{"other@stays"}), nil
	})
	if err != nil {
		t.Fatalf("pods left 5 minutes after their node was deleted: %q, want only other@stays", left)
	}
	t.Logf("the deleted node's pods were gone %v after the node", time.Since(deleted).Round(time.Second))
}
