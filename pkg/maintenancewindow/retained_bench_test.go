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

package maintenancewindow

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// BenchmarkRetainedPerThousandDeletedPods measures what the retries keep of
// pods that were rejected by a window ending in 9999 and then deleted (a
// CronJob replacing its pods under a long window): bytes of heap still in
// use, and retries still planned, per 1000 such pods. It only uses what the
// plugin had before its retries were reworked, so the same file measures
// the old code too.
func BenchmarkRetainedPerThousandDeletedPods(b *testing.B) {
	ctx := context.Background() // no per-plan log lines kept by the test log
	nodes := []*v1.Node{node("a", "2020-01-01T00:00:00Z/9999-12-31T00:00:00Z")}
	pl, _, h := newPlugin(b, defaultArgs(nil), nodes...)
	pods := h.client.CoreV1().Pods("default")
	indexer := h.informers.Core().V1().Pods().Informer().GetIndexer()
	heapInUse := func() int64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	// The fake clientset records every request, with its object: not ours.
	h.client.ClearActions()
	start := heapInUse()
	round := 0
	for b.Loop() {
		for i := range 1000 {
			pod := retainedBenchPod(fmt.Sprintf("job-%d-%d", round, i))
			h.addPod(b, pod)
			_, statuses := retainedBenchReject(b, ctx, pl, pod, nodes)
			pl.PostFilter(ctx, framework.NewCycleState(), pod, statuses)
			if err := pods.Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		round++
	}
	b.StopTimer()
	if err := waitFor(func() bool { return len(indexer.List()) == 0 }); err != nil {
		b.Fatalf("the informer still holds %d pods", len(indexer.List()))
	}
	_ = waitFor(func() bool { return pl.pendingRetries() == 0 }) // never, with the old code
	h.client.ClearActions()
	b.ReportMetric(float64(heapInUse()-start)/float64(round), "B-retained/1000pods")
	b.ReportMetric(float64(pl.pendingRetries())/float64(round), "retries-kept/1000pods")
}

// retainedBenchReject is PreFilter and Filter over nodes, with the statuses
// that PostFilter gets.
func retainedBenchReject(b *testing.B, ctx context.Context, pl *MaintenanceWindow, pod *v1.Pod, nodes []*v1.Node) (*framework.CycleState, *framework.NodeToStatus) {
	state := framework.NewCycleState()
	pl.PreFilter(ctx, state, pod, nil)
	statuses := framework.NewDefaultNodeToStatus()
	for _, n := range nodes {
		s := pl.Filter(ctx, state, pod, nodeInfo(n))
		if s.IsSuccess() {
			b.Fatalf("node %s passed", n.Name)
		}
		s.SetPlugin(Name)
		statuses.Set(n.Name, s)
	}
	return state, statuses
}

// retainedBenchPod is a Job's pod of ordinary size: labels, an owner, one
// container with resources and a few environment variables.
func retainedBenchPod(name string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "default", UID: types.UID(name + "-uid"),
			Labels: map[string]string{"app.kubernetes.io/name": "report", "batch.kubernetes.io/job-name": name,
				"batch.kubernetes.io/controller-uid": name + "-job-uid"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: name, UID: types.UID(name + "-job-uid")}},
		},
		Spec: v1.PodSpec{
			RestartPolicy: v1.RestartPolicyNever,
			Containers: []v1.Container{{
				Name: "report", Image: "registry.example.com/report:1.4.2", Command: []string{"/report", "--since=1m"},
				Env: []v1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "TARGET", Value: "s3://reports/daily"}},
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
					v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("128Mi")}},
			}},
		},
	}
}
