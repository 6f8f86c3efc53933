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

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/adminsched/scheduler-plugins/internal/localcluster"
	"github.com/adminsched/scheduler-plugins/pkg/podowner"
)

// startCluster starts a bare control plane (no scheduler) for the test and
// returns a client and its kubeconfig file.
func startCluster(t testing.TB) (*localcluster.ControlPlane, kubernetes.Interface, string) {
	t.Helper()
	dir := t.TempDir()
	cp, err := localcluster.Start(assets, dir)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, cp.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	return cp, client, kubeconfig
}

// podsPerNode lists the pods of a cluster: node -> sorted namespace/name.
func podsPerNode(t *testing.T, client kubernetes.Interface) map[string][]string {
	t.Helper()
	list, err := client.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]string{}
	for _, p := range list.Items {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		m[p.Spec.NodeName] = append(m[p.Spec.NodeName], p.Namespace+"/"+p.Name)
	}
	return m
}

// seedCluster creates 3 nodes with 4, 3 and 1 pods plus a DaemonSet pod
// each (and a finished pod, which a snapshot skips), through client-go.
func seedCluster(t *testing.T, client kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	for _, name := range []string{"node-a", "node-b", "node-c"} {
		res := corev1.ResourceList{"cpu": resource.MustParse("4"), "memory": resource.MustParse("16Gi"), "pods": resource.MustParse("110")}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:   name,
			Labels: map[string]string{corev1.LabelHostname: name, corev1.LabelTopologyZone: "zone-1"},
			Annotations: map[string]string{
				"scheduling.adminsched.io/maintenance-window": "2030-01-01T00:00:00Z/2030-01-01T02:00:00Z",
				"example.com/secret-annotation":               "do-not-copy",
			},
		}}
		node.Status = corev1.NodeStatus{Capacity: res, Allocatable: res,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}}
		// With its status: KWOK takes allocatable from the node it first sees.
		if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// KWOK runs the pods of a node only once it manages the node; job-1
	// below must run.
	if _, err := localcluster.WaitNodesManaged(ctx, client, time.Minute, "node-a", "node-b", "node-c"); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"shop", "ops"} {
		if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod := func(ns, name, node string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": strings.TrimRight(name, "-0123456789")},
				Annotations: map[string]string{"example.com/token": "do-not-copy"}},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "example.com/private:1",
				Env:       []corev1.EnvVar{{Name: "PASSWORD", Value: "do-not-copy"}},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": resource.MustParse("100m"), "memory": resource.MustParse("128Mi")}}}}},
		}
	}
	for i, node := range []string{"node-a", "node-a", "node-a", "node-a", "node-b", "node-b", "node-b", "node-c"} {
		if _, err := client.CoreV1().Pods("shop").Create(ctx, pod("shop", fmt.Sprintf("web-%d", i), node), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	seedDaemonSet(t, client, pod("ops", "agent", ""))
	// A finished pod, which a snapshot skips. KWOK starts it (Running):
	// only then is it marked finished, or KWOK's pending patch to Running
	// could land after ours.
	if _, err := client.CoreV1().Pods("shop").Create(ctx, pod("shop", "job-1", "node-c"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := client.CoreV1().Pods("shop").Get(ctx, "job-1", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, nil
	})
	if err != nil {
		t.Fatalf("KWOK did not start job-1: %v", err)
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		done, err := client.CoreV1().Pods("shop").Get(ctx, "job-1", metav1.GetOptions{})
		if err != nil {
			return err
		}
		done.Status.Phase = corev1.PodSucceeded
		_, err = client.CoreV1().Pods("shop").UpdateStatus(ctx, done, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// seedDaemonSet runs a real DaemonSet "agent" of template's spec in ops, one
// pod per node, and binds its pods as a scheduler would (no scheduler runs
// here): a made-up owner would be deleted by the garbage collector.
func seedDaemonSet(t *testing.T, client kubernetes.Interface, template *corev1.Pod) {
	t.Helper()
	ctx := context.Background()
	labels := map[string]string{"app": "agent"}
	spec := template.Spec
	spec.SchedulerName = "seed-binds-these"
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "ops"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: template.Annotations}, Spec: spec},
		},
	}
	if _, err := client.AppsV1().DaemonSets("ops").Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var pods []corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := client.CoreV1().Pods("ops").List(ctx, metav1.ListOptions{LabelSelector: "app=agent"})
		if err != nil {
			return false, nil
		}
		pods = list.Items
		return len(pods) == 3, nil
	})
	if err != nil {
		t.Fatalf("the DaemonSet controller made %d of 3 agent pods: %v", len(pods), err)
	}
	for _, p := range pods {
		// The controller pins each pod to its node by a metadata.name term.
		node := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields[0].Values[0]
		binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name}, Target: corev1.ObjectReference{Kind: "Node", Name: node}}
		if err := client.CoreV1().Pods("ops").Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatalf("binding %s to %s: %v", p.Name, node, err)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

// checkBoundPodsSurvive: the garbage collector deletes pods whose owner does
// not exist. Once a Deployment created after the bound pods has its pod
// (the controllers run), every bound pod is still there, and the agent pods
// are DaemonSet pods to the plugins.
func checkBoundPodsSurvive(t *testing.T, client kubernetes.Interface, want map[string][]string) {
	t.Helper()
	ctx := context.Background()
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "late", Namespace: "shop"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "late"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "late"}},
				Spec:       corev1.PodSpec{SchedulerName: "custom-scheduler", Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}
	if _, err := client.AppsV1().Deployments("shop").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := client.CoreV1().Pods("shop").List(ctx, metav1.ListOptions{LabelSelector: "app=late"})
		return err == nil && len(list.Items) == 1 && list.Items[0].Spec.NodeName != "", nil
	})
	if err != nil {
		t.Fatalf("the Deployment created after the bound pods got no bound pod: %v", err)
	}
	got := podsPerNode(t, client)
	list, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	agents := 0
	for _, p := range list.Items {
		if strings.HasPrefix(p.Name, "late-") {
			got[p.Spec.NodeName] = slices.DeleteFunc(got[p.Spec.NodeName], func(s string) bool { return s == p.Namespace+"/"+p.Name })
		}
		if p.Namespace == "ops" {
			agents++
			if !podowner.IsDaemonSetPod(&p) {
				t.Errorf("bound pod %s/%s owners %v: not a DaemonSet pod", p.Namespace, p.Name, p.OwnerReferences)
			}
		}
	}
	if !cmp.Equal(want, got) || agents != 3 {
		t.Errorf("bound pods per node once the controllers ran (-want +got):\n%s", cmp.Diff(want, got))
	}
}

// TestSnapshot seeds a control plane through client-go, snapshots it with
// `playground snapshot`, replays the snapshot (the same pods on the same
// nodes, nothing secret in the file), then runs a scenario whose base is
// the snapshot: its Deployment goes to the emptiest node under the shipped
// NodeLessPods (LeastPods) profile, which ignores DaemonSet pods.
func TestSnapshot(t *testing.T) {
	cp, client, kubeconfig := startCluster(t)
	seedCluster(t, client)
	want := podsPerNode(t, client) // without the finished pod

	dir := t.TempDir()
	snapshot := filepath.Join(dir, "cluster.yaml")
	var stdout, stderr syncBuffer
	code := execute(context.Background(), []string{"snapshot", "--kubeconfig", kubeconfig, "--output-file", snapshot, "--page-size", "2"}, &stdout, &stderr)
	t.Logf("playground snapshot: exit %d\nstderr:\n%s", code, stderr.String())
	if err := cp.Stop(); err != nil {
		t.Error(err)
	}
	if code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
	if !strings.Contains(stderr.String(), "wrote 3 nodes and 11 bound pods to "+snapshot) {
		t.Errorf("stderr does not report 3 nodes and 11 bound pods")
	}
	data, err := os.ReadFile(snapshot)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"do-not-copy", "secret", "PASSWORD", "example.com", "token", "job-1"} {
		if strings.Contains(string(data), leak) {
			t.Errorf("the snapshot contains %q:\n%s", leak, data)
		}
	}
	for _, keep := range []string{"scheduling.adminsched.io/maintenance-window: 2030-01-01T00:00:00Z/2030-01-01T02:00:00Z",
		`"owner":{"apiVersion":"apps/v1","kind":"DaemonSet","name":"agent"}`} {
		if !strings.Contains(string(data), keep) {
			t.Errorf("the snapshot lacks %q:\n%s", keep, data)
		}
	}

	// The snapshot replayed: same pods per node.
	out, replay := keepRun(t, "--config", shippedConfig, "--scenario", snapshot, "--output", "json")
	if got := podsPerNode(t, replay); !cmp.Equal(want, got) {
		t.Errorf("pods per node after replay (-want +got):\n%s", cmp.Diff(want, got))
	}
	if r := decodeResult(t, out); len(r.Pods) != 0 || len(r.Nodes) != 3 {
		t.Errorf("result %+v: want the 3 nodes and no pods to schedule", r)
	}
	checkBoundPodsSurvive(t, replay, want)
	node, err := replay.CoreV1().Nodes().Get(context.Background(), "node-b", metav1.GetOptions{})
	if err != nil || node.Annotations["scheduling.adminsched.io/maintenance-window"] == "" || node.Annotations["example.com/secret-annotation"] != "" {
		t.Errorf("replayed node-b annotations %v (%v)", node.Annotations, err)
	}

	// A scenario on top of the snapshot.
	top := filepath.Join(dir, "more.yaml")
	if err := os.WriteFile(top, []byte(`base: cluster.yaml
objects:
  - kind: Deployment
    metadata: {name: api, namespace: shop}
    spec:
      replicas: 2
      template:
        spec:
          containers:
            - name: api
              image: registry.k8s.io/pause:3.10
              resources: {requests: {cpu: 100m, memory: 128Mi}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runPlayground(t, "--config", shippedConfig, "--scenario", top, "--output", "json")
	if code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
	r := decodeResult(t, out)
	if got := replicasPerNode(r, "api-"); !cmp.Equal(got, map[string]int{"node-c": 2}) {
		t.Errorf("api replicas per node %v, want both on node-c (1 pod besides its DaemonSet pod, against 3 and 4)", got)
	}
}

func TestSnapshotFlags(t *testing.T) {
	// One byte over the cap, sparse.
	hugeKubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(hugeKubeconfig, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(hugeKubeconfig, maxKubeconfigBytes+1); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--namespace", "a", "--all-namespaces"}, "exclude each other"},
		{[]string{"--all-namespaces=false"}, "needs --namespace"},
		{[]string{"--scheduler-name", "custom-scheduler"}, "--scheduler-name selects pending pods: it needs --include-pending"},
		{[]string{"--page-size", "0"}, `invalid argument "0" for "--page-size" flag: must be at least 1`},
		{[]string{"extra"}, `unexpected argument "extra": playground snapshot takes flags only`},
		{[]string{"--kubeconfig", "/nonexistent/kubeconfig"}, "loading the kubeconfig"},
		{[]string{"--kubeconfig", "/dev/zero"}, "loading the kubeconfig: /dev/zero is a device, not a regular file: a kubeconfig file must be a file"},
		{[]string{"--kubeconfig", hugeKubeconfig}, "loading the kubeconfig: " + hugeKubeconfig + " is larger than 16 MiB (16777216 bytes), the most a kubeconfig file may hold"},
	}
	for _, tt := range tests {
		var stdout, stderr syncBuffer
		if code := execute(context.Background(), append([]string{"snapshot"}, tt.args...), &stdout, &stderr); code != exitInput || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%q: exit %d, stderr %q: want %d and %q", tt.args, code, stderr.String(), exitInput, tt.want)
		}
	}
	var stdout, stderr syncBuffer
	if code := execute(context.Background(), []string{"snapshot", "--help"}, &stdout, &stderr); code != exitOK || !strings.Contains(stdout.String(), "playground snapshot [flags]") {
		t.Errorf("--help: exit %d, stdout %q", code, stdout.String())
	}
	// The playground's own help names the subcommand.
	var out, errOut syncBuffer
	if code := run(context.Background(), []string{"--help"}, &out, &errOut); code != exitOK || !strings.Contains(out.String(), "\n  snapshot    ") {
		t.Errorf("playground --help: exit %d, stdout %q", code, out.String())
	}
}

// TestSnapshotIncludePending is the monitoring runbook's "why is it
// Pending": a cluster (the playground, kept up) where a payments pod pinned
// to the US waits, as the EU data residency rule refuses the US nodes;
// `playground snapshot --include-pending` records it with what the
// scheduler said, and its replay with --explain names the rule and the
// node selector that leave it no node. Without the flag the pod is not in
// the snapshot.
func TestSnapshotIncludePending(t *testing.T) {
	config := scenarios + "placement-config.yaml"
	_, _, kubeconfig := keepRunKubeconfig(t, "--scenario", scenarios+"policy/residency.yaml", "--config", config)
	dir := t.TempDir()
	take := func(name string, args ...string) (string, string) {
		t.Helper()
		file := filepath.Join(dir, name)
		var stdout, stderr syncBuffer
		code := execute(context.Background(), append([]string{"snapshot", "--kubeconfig", kubeconfig, "--output-file", file}, args...), &stdout, &stderr)
		t.Logf("playground snapshot %s: exit %d\nstderr:\n%s", strings.Join(args, " "), code, stderr.String())
		if code != exitOK {
			t.Fatalf("exit code %d, want 0", code)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		return string(data), stderr.String()
	}
	if old, _ := take("bound.yaml"); strings.Contains(old, "us-report") || strings.Contains(old, "objects:") {
		t.Errorf("a snapshot without --include-pending holds the pending pod:\n%s", old)
	}
	data, stderr := take("pending.yaml", "--include-pending", "--scheduler-name", "custom-scheduler")
	if !strings.Contains(stderr, "\n1 pending pod\nwrote 6 nodes, 16 bound pods and 1 pending pod to ") {
		t.Errorf("stderr does not report 1 pending pod")
	}
	comment := `# payments/us-report (scheduler custom-scheduler): 0/6 nodes are available: `
	if !strings.Contains(data, comment) || !strings.Contains(data, `didn't match placement rule \"eu-data-residency\"`) {
		t.Errorf("the snapshot lacks the pending pod with its last FailedScheduling message (%q):\n%s", comment, data)
	}
	if !strings.Contains(data, ": 6 nodes, 16 bound pods and 1 pending pod of every namespace.") {
		t.Errorf("the snapshot's header does not count 16 bound pods and 1 pending pod:\n%s", data)
	}

	code, out, _ := runPlayground(t, "--scenario", filepath.Join(dir, "pending.yaml"), "--config", config, "--explain", "-o", "json")
	if code != exitOK {
		t.Fatalf("replay: exit code %d, want 0", code)
	}
	r := decodeResult(t, out)
	if len(r.Pods) != 1 || r.Pods[0].Name != "us-report" || r.Pods[0].Node != "" || r.Pods[0].Explain == nil {
		t.Fatalf("replayed pods %+v: want payments/us-report, unbound, explained", r.Pods)
	}
	got := map[string][]string{}
	for _, g := range r.Pods[0].Explain.Filtered {
		got[g.Plugin+": "+g.Reason] = g.Nodes
	}
	want := map[string][]string{
		`PlacementPolicy: node(s) didn't match placement rule "eu-data-residency"`: {"us-1", "us-2"},
		`NodeAffinity: node(s) didn't match Pod's node affinity/selector`:          {"eu-1", "eu-2", "spot-1", "spot-2"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the replay's filtered nodes of us-report, by plugin and reason (-want +got):\n%s", diff)
	}
}
