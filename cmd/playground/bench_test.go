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
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/adminsched/scheduler-plugins/internal/playground/apply"
	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
)

// bigSnapshot is a snapshot of a cluster of nodes nodes in 3 zones, each
// running one DaemonSet pod, and pods pods in total, the others of
// ReplicaSets over 50 namespaces.
func bigSnapshot(nodes, pods int) *scenario.Scenario {
	s := &scenario.Scenario{}
	for i := range nodes {
		s.Nodes = append(s.Nodes, scenario.NodeSpec{
			Name:        fmt.Sprintf("node-%05d", i),
			Labels:      map[string]string{"topology.kubernetes.io/zone": fmt.Sprintf("zone-%d", i%3), "node.kubernetes.io/instance-type": "m5.4xlarge"},
			Allocatable: scenario.Allocatable{CPU: "15890m", Memory: "62Gi", Pods: "110"},
		})
	}
	requests := []scenario.ContainerRequests{{Requests: map[corev1.ResourceName]scenario.Quantity{"cpu": "100m", "memory": "128Mi"}}}
	for i := range pods {
		node := s.Nodes[i%nodes].Name
		bp := scenario.BoundPod{NodeName: node, Containers: requests}
		if i < nodes {
			bp.Namespace, bp.Name = "kube-system", "node-agent-"+node
			bp.Labels = map[string]string{"app": "node-agent"}
			bp.Owner = &scenario.Owner{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "node-agent"}
		} else {
			app := fmt.Sprintf("app-%d", i%500)
			bp.Namespace, bp.Name = fmt.Sprintf("team-%d", i%50), fmt.Sprintf("%s-%d", app, i)
			bp.Labels = map[string]string{"app": app}
			bp.Owner = &scenario.Owner{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: app + "-5d4f8"}
		}
		s.BoundPods = append(s.BoundPods, bp)
	}
	return s
}

// BenchmarkReplaySnapshot loads and replays a snapshot of 5,000 nodes and
// 50,000 pods on a real control plane: the time of scenario.Load (read,
// decode, validate) plus apply.CreateNodes and apply.CreateBoundPods (the
// nodes, then every bound pod), as bin/playground does before it starts the scheduler. Starting
// and stopping the control plane is not timed. Run it with
//
//	KUBEBUILDER_ASSETS=$PWD/bin go test ./cmd/playground/ -run '^$' -bench ReplaySnapshot -benchtime=1x -timeout 30m
func BenchmarkReplaySnapshot(b *testing.B) {
	const nodes, pods = 5000, 50000
	path := filepath.Join(b.TempDir(), "cluster.yaml")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := scenario.Write(f, bigSnapshot(nodes, pods), nil); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	st, _ := os.Stat(path)
	b.Logf("snapshot of %d nodes and %d pods: %d bytes", nodes, pods, st.Size())

	var load, replay time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		cp, client, _ := startCluster(b)
		b.StartTimer()

		start := time.Now()
		s, err := scenario.Load(path, []string{"custom-scheduler"})
		if err != nil {
			b.Fatal(err)
		}
		loaded := time.Now()
		ctx := context.Background()
		if err := apply.CreateNodes(ctx, client, s.NodeObjects(time.Now()), nil); err != nil {
			b.Fatal(err)
		}
		if err := apply.CreateBoundPods(ctx, client, s.BoundDaemonSets, s.BoundPods, true, nil); err != nil {
			b.Fatal(err)
		}
		load += loaded.Sub(start)
		replay += time.Since(loaded)

		b.StopTimer()
		if err := cp.Stop(); err != nil {
			b.Error(err)
		}
	}
	b.ReportMetric(load.Seconds()/float64(b.N), "load-s/op")
	b.ReportMetric(replay.Seconds()/float64(b.N), "create-s/op")
	b.ReportMetric(float64(nodes+pods)/replay.Seconds()*float64(b.N), "objects/s")
}
