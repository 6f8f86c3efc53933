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
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
)

// TestKeepApply is the README's flow: the cluster --keep leaves up behaves
// as a real one. On the tutorial's nodes alone
// (examples/scenarios/tutorial-nodes.yaml), `kubectl apply -k
// manifests/examples` with the real kubectl (bin/kubectl, `make kubectl`;
// or $KUBECTL) ends up Running: the Deployment's 5 pods, made by its
// controllers, and the 2 bare pods, on the scenario's nodes.
func TestKeepApply(t *testing.T) {
	kubectl := os.Getenv("KUBECTL")
	if kubectl == "" {
		kubectl = filepath.Join(assets, "kubectl")
	}
	if _, err := os.Stat(kubectl); err != nil {
		t.Fatalf("this test runs kubectl (%v): build it with `make kubectl`, or set KUBECTL", err)
	}
	_, client, kubeconfig := keepRunKubeconfig(t, "--config", shippedConfig, "--scenario", scenarios+"tutorial-nodes.yaml")
	ctx := context.Background()
	out, err := exec.CommandContext(ctx, kubectl, "--kubeconfig", kubeconfig, "apply", "-k", "../../manifests/examples").CombinedOutput()
	t.Logf("kubectl apply -k manifests/examples:\n%s", out)
	if err != nil {
		t.Fatalf("kubectl apply: %v", err)
	}

	var last []string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		last = last[:0]
		replicas, bare := 0, 0
		for _, p := range list.Items {
			last = append(last, p.Name+" "+string(p.Status.Phase)+" on "+p.Spec.NodeName)
			if p.Status.Phase != corev1.PodRunning || !strings.HasPrefix(p.Spec.NodeName, "tutorial-") {
				continue
			}
			switch {
			case strings.HasPrefix(p.Name, "test-deployment-"):
				replicas++
			case p.Name == "test-pod-1" || p.Name == "test-pod-2":
				bare++
			}
		}
		return replicas == 5 && bare == 2 && len(list.Items) == 7, nil
	})
	if err != nil {
		t.Errorf("want the 5 replicas and the 2 bare pods Running on tutorial nodes; pods: %v", last)
	}
	out, err = exec.CommandContext(ctx, kubectl, "--kubeconfig", kubeconfig, "get", "pods", "-o", "wide").CombinedOutput()
	t.Logf("kubectl get pods -o wide (%v):\n%s", err, out)
}

// TestRebalance runs examples/scenarios/rebalance.yaml: after the
// Deployment is scaled down and up again, the consolidation profile has
// packed its replicas onto one node; the default plugins have not.
func TestRebalance(t *testing.T) {
	code, out, _ := runPlayground(t, "--scenario", scenarios+"rebalance.yaml",
		"--config", "../../manifests/nodelesspods/consolidation-config.yaml",
		"--compare", defaultProfile, "--output", "json")
	if code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
	runs := decodeRuns(t, out)
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2", len(runs))
	}
	used := func(nodes []report.NodeResult) (n int, counts []int) {
		for _, node := range nodes {
			counts = append(counts, node.Pods)
			if node.Pods > 0 {
				n++
			}
		}
		return n, counts
	}
	for i, r := range runs {
		if len(r.Result.Steps) != 2 || !strings.HasPrefix(r.Result.Steps[0].Step, "scale Deployment default/web to 2") {
			t.Fatalf("run %d steps %+v, want the 2 scale steps", i+1, r.Result.Steps)
		}
		if len(r.Result.Pods) != 4 {
			t.Errorf("run %d: %d pods at the end, want 4", i+1, len(r.Result.Pods))
		}
		if n, counts := used(r.Result.Steps[1].Nodes); i == 0 && (n != 1 || counts[0]+counts[1]+counts[2] != 4) {
			t.Errorf("consolidation: pods per node after the scale up %v, want all 4 on one node", counts)
		} else if i == 1 && n < 2 {
			t.Errorf("default plugins: pods per node after the scale up %v, want them spread", counts)
		}
	}
	if n, counts := used(runs[0].Result.Steps[0].Nodes); n != 1 {
		t.Errorf("consolidation: pods per node after the scale down %v, want the 2 left on one node", counts)
	}
}
