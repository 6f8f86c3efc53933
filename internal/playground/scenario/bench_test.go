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

package scenario

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// bigSnapshot is a snapshot of a cluster of nodes nodes in 3 zones, each
// running one DaemonSet pod, and pods pods in total, the others of
// ReplicaSets over 50 namespaces.
func bigSnapshot(nodes, pods int) *Scenario {
	s := &Scenario{}
	for i := range nodes {
		s.Nodes = append(s.Nodes, NodeSpec{
			Name:        fmt.Sprintf("node-%05d", i),
			Labels:      map[string]string{"topology.kubernetes.io/zone": fmt.Sprintf("zone-%d", i%3), "node.kubernetes.io/instance-type": "m5.4xlarge"},
			Allocatable: Allocatable{CPU: "15890m", Memory: "62Gi", Pods: "110"},
		})
	}
	requests := []ContainerRequests{{Requests: map[corev1.ResourceName]Quantity{"cpu": "100m", "memory": "128Mi"}}}
	for i := range pods {
		node := s.Nodes[i%nodes].Name
		bp := BoundPod{NodeName: node, Containers: requests}
		if i < nodes {
			bp.Namespace, bp.Name = "kube-system", "node-agent-"+node
			bp.Labels = map[string]string{"app": "node-agent"}
			bp.Owner = &Owner{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "node-agent"}
		} else {
			app := fmt.Sprintf("app-%d", i%500)
			bp.Namespace, bp.Name = fmt.Sprintf("team-%d", i%50), fmt.Sprintf("%s-%d", app, i)
			bp.Labels = map[string]string{"app": app}
			bp.Owner = &Owner{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: app + "-5d4f8"}
		}
		s.BoundPods = append(s.BoundPods, bp)
	}
	return s
}

// BenchmarkLoadSnapshot reads, decodes, checks and compiles a scenario of
// 5,000 nodes and 50,000 bound pods as playground snapshot writes it: what
// bin/playground does with such a file before it starts a cluster (the
// cluster's part, creating them, is apply's BenchmarkReplaySnapshot). Run it
// with
//
//	go test ./internal/playground/scenario/ -run '^$' -bench LoadSnapshot -benchtime=1x
func BenchmarkLoadSnapshot(b *testing.B) {
	const nodes, pods = 5000, 50000
	path := filepath.Join(b.TempDir(), "cluster.yaml")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := Write(f, bigSnapshot(nodes, pods), nil); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(st.Size())/(1<<20), "MiB")
	b.ReportAllocs()
	for b.Loop() {
		p, err := loadPlan(path, []string{"custom-scheduler"})
		if err != nil {
			b.Fatal(err)
		}
		if len(p.BoundPods) != pods || len(p.NodeNames) != nodes {
			b.Fatalf("%d bound pods on %d nodes", len(p.BoundPods), len(p.NodeNames))
		}
	}
}
