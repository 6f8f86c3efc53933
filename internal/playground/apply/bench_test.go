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

package apply

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/localcluster"
)

// boundBenchQuiet: the cluster is quiet once the API server has had no pod
// write for that long (KWOK started the pods it starts, the DaemonSet
// controller removed the pods it made).
const boundBenchQuiet = 3 * time.Second

// BenchmarkReplaySnapshot replays a snapshot of 5,000 nodes in 3 zones and
// 50,000 bound pods (one DaemonSet's pod on each node, the others without
// an owner over 50 namespaces) on the embedded cluster as the playground
// runs it (kube-controller-manager and KWOK included): CreateNodes, then
// CreateBoundPods waiting for the DaemonSet controller. Starting the
// cluster is not timed. It reports
//
//	create-s/op  CreateNodes + CreateBoundPods
//	quiet-s/op   from the start until the last pod write before boundBenchQuiet without any
//	<process>-cpu-s/op  CPU time of etcd, kube-apiserver, kube-controller-manager, kwok and
//	             this test binary from the start to the end of the quiet wait
//	nodes-s/op   CreateNodes alone
//
// With BOUND_BENCH_PROFILE=<file> it saves a CPU profile of kube-apiserver
// over the first 60 s of CreateBoundPods, with BOUND_BENCH_REQUESTS=<file>
// the API server's request counts at the end.
//
// Run it with
//
//	KUBEBUILDER_ASSETS=$PWD/bin go test ./internal/playground/apply/ -run '^$' -bench ReplaySnapshot -benchtime=1x -timeout 30m
func BenchmarkReplaySnapshot(b *testing.B) {
	const nodes, pods = 5000, 50000
	var create, nodesTime, quiet time.Duration
	cpu := map[string]time.Duration{}
	for range b.N {
		b.StopTimer()
		cp := boundBenchCluster(b)
		client, err := kubernetes.NewForConfig(cp.Config)
		if err != nil {
			b.Fatal(err)
		}
		nodeObjs, daemonSets, podObjs := boundBenchSnapshot(nodes, pods)
		ctx := context.Background()
		cpuBefore := boundBenchCPU(b)
		b.StartTimer()

		start := time.Now()
		if err := CreateNodes(ctx, client, nodeObjs, nil); err != nil {
			b.Fatal(err)
		}
		nodesCreated := time.Now()
		profiled := boundBenchProfile(ctx, client)
		if err := CreateBoundPods(ctx, client, daemonSets, podObjs, true, nil); err != nil {
			b.Fatal(err)
		}
		created := time.Now()
		end := boundBenchQuietSince(ctx, b, client, created)
		b.StopTimer()
		create += created.Sub(start)
		nodesTime += nodesCreated.Sub(start)
		quiet += end.Sub(start)
		for name, d := range boundBenchCPU(b) {
			cpu[name] += d - cpuBefore[name]
		}
		<-profiled
		boundBenchRequests(ctx, b, client)
		if err := cp.Stop(); err != nil {
			b.Error(err)
		}
	}
	b.ReportMetric(create.Seconds()/float64(b.N), "create-s/op")
	b.ReportMetric(nodesTime.Seconds()/float64(b.N), "nodes-s/op")
	b.ReportMetric(quiet.Seconds()/float64(b.N), "quiet-s/op")
	for name, d := range cpu {
		b.ReportMetric(d.Seconds()/float64(b.N), name+"-cpu-s/op")
	}
}

// boundBenchProfile saves a 60 s CPU profile of kube-apiserver in the
// file $BOUND_BENCH_PROFILE, when set; the channel is closed when done.
func boundBenchProfile(ctx context.Context, client kubernetes.Interface) <-chan struct{} {
	done := make(chan struct{})
	path := os.Getenv("BOUND_BENCH_PROFILE")
	if path == "" {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		data, err := client.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").Param("seconds", "60").DoRaw(ctx)
		if err != nil {
			data = []byte(err.Error())
		}
		_ = os.WriteFile(path, data, 0o644)
	}()
	return done
}

// boundBenchRequests saves kube-apiserver's request counts
// (apiserver_request_total) in the file $BOUND_BENCH_REQUESTS, when set.
func boundBenchRequests(ctx context.Context, b *testing.B, client kubernetes.Interface) {
	path := os.Getenv("BOUND_BENCH_REQUESTS")
	if path == "" {
		return
	}
	data, err := client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		b.Error(err)
		return
	}
	var keep []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "apiserver_request_total{") {
			keep = append(keep, l)
		}
	}
	if err := os.WriteFile(path, []byte(strings.Join(keep, "\n")+"\n"), 0o644); err != nil {
		b.Error(err)
	}
}

// boundBenchCluster starts the embedded cluster from KUBEBUILDER_ASSETS
// (default ../../../bin), its logs in a temporary directory.
func boundBenchCluster(b *testing.B) *localcluster.ControlPlane {
	b.Helper()
	assets, err := localcluster.AssetsFromEnv("../../../bin")
	if err != nil {
		b.Fatal(err)
	}
	cp, err := localcluster.Start(assets, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	return cp
}

// boundBenchQuietSince waits until the API server has had no pod write
// (create, update, patch, delete) for boundBenchQuiet, and returns when
// the last one before came, or since when nothing came. It reads the API
// server's request counts, which cost less than watching every pod would.
func boundBenchQuietSince(ctx context.Context, b *testing.B, client kubernetes.Interface, since time.Time) time.Time {
	last, lastCount := since, -1
	for time.Since(last) < boundBenchQuiet {
		n, err := boundBenchPodWrites(ctx, client)
		if err != nil {
			b.Fatal(err)
		}
		if n != lastCount {
			if lastCount >= 0 {
				last = time.Now()
			}
			lastCount = n
		}
		time.Sleep(250 * time.Millisecond)
	}
	return last
}

// boundBenchPodWrites sums apiserver_request_total over the pod writes.
func boundBenchPodWrites(ctx context.Context, client kubernetes.Interface) (int, error) {
	data, err := client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, err
	}
	total := 0
	for _, l := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(l, "apiserver_request_total{") || !strings.Contains(l, `resource="pods"`) {
			continue
		}
		for _, verb := range []string{"POST", "PUT", "PATCH", "DELETE", "APPLY"} {
			if strings.Contains(l, `verb="`+verb+`"`) {
				n, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
				if err != nil {
					return 0, fmt.Errorf("metrics line %q: %w", l, err)
				}
				total += int(n)
			}
		}
	}
	return total, nil
}

// boundBenchCPU reads the CPU time (user and system) of this process and
// its children: the cluster's programs.
func boundBenchCPU(b *testing.B) map[string]time.Duration {
	b.Helper()
	self := os.Getpid()
	cpu := map[string]time.Duration{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ... utime stime: fields 14 and 15.
		s := string(data)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		fields := strings.Fields(s[end+1:])
		if len(fields) < 13 {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		name := s[open+1 : end]
		switch {
		case pid == self:
			name = "test"
		case ppid != self:
			continue
		}
		utime, _ := strconv.ParseInt(fields[11], 10, 64)
		stime, _ := strconv.ParseInt(fields[12], 10, 64)
		// Linux counts in USER_HZ, 100 a second on every architecture we run.
		cpu[name] += time.Duration(utime+stime) * 10 * time.Millisecond
	}
	return cpu
}

// boundBenchSnapshot builds what a snapshot of a cluster of nodes nodes in
// 3 zones holds, as the playground's plan has it: the nodes, ready with
// their status; a DaemonSet pinned to every node; one pod of it on each
// node, then pods-nodes pods of ReplicaSets (not created: no owner
// reference, an annotation) over 50 namespaces, round robin on the nodes.
func boundBenchSnapshot(nodes, pods int) ([]*corev1.Node, []*appsv1.DaemonSet, []*corev1.Pod) {
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("15890m"),
		corev1.ResourceMemory: resource.MustParse("62Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	nodeObjs := make([]*corev1.Node, nodes)
	terms := make([]corev1.NodeSelectorTerm, nodes)
	for i := range nodeObjs {
		name := fmt.Sprintf("node-%05d", i)
		// Created as the playground creates them, started (see
		// localcluster.StartedNode).
		nodeObjs[i] = localcluster.StartedNode(&corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
				corev1.LabelHostname:           name,
				corev1.LabelTopologyZone:       fmt.Sprintf("zone-%d", i%3),
				corev1.LabelInstanceTypeStable: "m5.4xlarge",
			}},
			Status: corev1.NodeStatus{
				Capacity: res.DeepCopy(), Allocatable: res.DeepCopy(),
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}},
			},
		}, time.Now())
		terms[i] = corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{
			Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{name},
		}}}
	}
	const dsLabel = "playground.adminsched.io/daemonset"
	selector := map[string]string{dsLabel: "node-agent"}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "node-agent"},
		Spec: appsv1.DaemonSetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: selector},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: selector},
				Spec: corev1.PodSpec{
					SchedulerName: "playground-bound-pods",
					Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms},
					}},
					Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
					Containers:  []corev1.Container{{Name: "c-0", Image: "registry.k8s.io/pause:3.10"}},
				},
			},
		},
	}
	requests := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}
	podObjs := make([]*corev1.Pod, pods)
	for i := range podObjs {
		node := nodeObjs[i%nodes].Name
		pod := &corev1.Pod{Spec: corev1.PodSpec{
			NodeName:   node,
			Containers: []corev1.Container{{Name: "c-0", Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{Requests: requests}}},
		}}
		if i < nodes {
			pod.Namespace, pod.Name = "kube-system", "node-agent-"+node
			pod.Labels = map[string]string{"app": "node-agent", dsLabel: "node-agent"}
			pod.OwnerReferences = []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "DaemonSet", Name: "node-agent",
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}}
		} else {
			app := fmt.Sprintf("app-%d", i%500)
			pod.Namespace, pod.Name = fmt.Sprintf("team-%d", i%50), fmt.Sprintf("%s-%d", app, i)
			pod.Labels = map[string]string{"app": app}
			pod.Annotations = map[string]string{"playground.adminsched.io/owner": "ReplicaSet/" + app + "-5d4f8"}
		}
		podObjs[i] = pod
	}
	return nodeObjs, []*appsv1.DaemonSet{ds}, podObjs
}
