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
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adminsched/scheduler-plugins/internal/localcluster"
)

const (
	karpenterScenario = scenarios + "karpenter.yaml"
	karpenterConfig   = scenarios + "karpenter-config.yaml"
)

// TestKarpenter is examples/scenarios/karpenter.yaml as its README section
// runs it, with --explain: with the rule rendered as an admission policy
// Karpenter adds eu-west-1 nodes only, every pod is bound, the ledger's on
// Karpenter's nodes and web's on us-system, and each ledger pod's
// explanation names the node it was bound to.
func TestKarpenter(t *testing.T) {
	code, out, stderr := runPlayground(t, "--karpenter", "--admission-policies", "--explain",
		"--scenario", karpenterScenario, "--config", karpenterConfig, "--output", "json")
	if code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
	r := decodeResult(t, out)
	if r.Karpenter == nil {
		t.Fatalf("no karpenter in the output:\n%s", out)
	}
	if diff := cmp.Diff([]string{"region-eu-west-1", "region-us-east-1"}, r.Karpenter.NodePools); diff != "" {
		t.Errorf("NodePools (-want +got):\n%s", diff)
	}
	if len(r.Karpenter.Nodes) == 0 {
		t.Fatalf("Karpenter added no node")
	}
	added := map[string]bool{}
	type summary struct{ Region, NodePool, CapacityType string }
	for _, n := range r.Karpenter.Nodes {
		added[n.Name] = true
		got := summary{n.Region, n.NodePool, n.CapacityType}
		if diff := cmp.Diff(summary{"eu-west-1", "region-eu-west-1", "on-demand"}, got); diff != "" {
			t.Errorf("node %s (-want +got):\n%s", n.Name, diff)
		}
		if n.InstanceType == "" || n.Pods == 0 {
			t.Errorf("node %s: instance type %q, %d pods: want both", n.Name, n.InstanceType, n.Pods)
		}
	}
	ledger := 0
	for _, p := range r.Pods {
		switch {
		case p.Node == "":
			t.Errorf("pod %s/%s not bound: %s", p.Namespace, p.Name, p.Reason)
		case p.Namespace == "payments":
			ledger++
			if !added[p.Node] {
				t.Errorf("ledger pod %s on %s, want a node Karpenter added", p.Name, p.Node)
			}
			if p.Explain == nil || p.Explain.Chosen != p.Node {
				t.Errorf("ledger pod %s: explanation %+v, want one that chose %s", p.Name, p.Explain, p.Node)
			}
		case p.Node != "us-system":
			t.Errorf("pod %s/%s on %s, want us-system", p.Namespace, p.Name, p.Node)
		}
	}
	if ledger != 4 {
		t.Errorf("%d ledger pods, want 4", ledger)
	}
	for _, w := range []string{"starting Karpenter", "applying the MutatingAdmissionPolicies rendered from " + karpenterConfig + ": placementpolicy-eu-data-residency"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr does not contain %q", w)
		}
	}
}

// TestKarpenterBadInput: --karpenter without bin/karpenter exits 1 naming
// what is missing and `make karpenter`, and a scenario with NodePools
// without --karpenter exits 2 saying to run with it; nothing starts.
func TestKarpenterBadInput(t *testing.T) {
	noKarpenter := t.TempDir()
	for _, b := range localcluster.Binaries {
		if err := os.Symlink(filepath.Join(assets, b), filepath.Join(noKarpenter, b)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name     string
		args     []string
		wantCode int
		want     []string
	}{
		{name: "no bin/karpenter", args: []string{"--karpenter", "--scenario", karpenterScenario, "--config", karpenterConfig, "--assets", noKarpenter},
			wantCode: 1, want: []string{"playground: --karpenter: not found (or not executable): " + filepath.Join(noKarpenter, "karpenter") + ", ", "make karpenter"}},
		{name: "NodePools without --karpenter", args: []string{"--scenario", karpenterScenario, "--config", karpenterConfig},
			wantCode: 2, want: []string{"objects[0] (NodePool region-eu-west-1)", "run with --karpenter"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := runPlayground(t, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d", code, tt.wantCode)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			if strings.Contains(stderr, "starting the control plane") {
				t.Errorf("the control plane started for bad input")
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not contain %q", w)
				}
			}
		})
	}
}
