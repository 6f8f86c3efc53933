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
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/klog/v2/ktesting"

	"github.com/adminsched/scheduler-plugins/internal/localcluster"
	"github.com/adminsched/scheduler-plugins/internal/playground/report"
)

const (
	karpenterScenario = scenarios + "karpenter.yaml"
	karpenterConfig   = scenarios + "karpenter-config.yaml"
)

// controlPlaneOnly is a copy of the assets' control plane binaries (as
// symlinks) without Karpenter.
func controlPlaneOnly(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, b := range localcluster.Binaries {
		if err := os.Symlink(filepath.Join(assets, b), filepath.Join(dir, b)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestPlayKarpenterBadInput: what --karpenter and --admission-policies
// refuse, before anything starts.
func TestPlayKarpenterBadInput(t *testing.T) {
	for _, tt := range []struct {
		name       string
		opts       Options
		wantAssets bool // an *AssetsError, else an *InputError
		want       []string
	}{
		{name: "NodePools without Karpenter", opts: Options{Assets: assets, Scenario: loadScenario(t, karpenterScenario), Configs: []string{karpenterConfig}},
			want: []string{"objects[0] (NodePool region-eu-west-1), objects[1] (NodePool region-us-east-1)", "run with --karpenter"}},
		{name: "Karpenter missing", opts: Options{Assets: controlPlaneOnly(t), Scenario: loadScenario(t, karpenterScenario), Configs: []string{karpenterConfig}, Karpenter: true},
			wantAssets: true, want: []string{"--karpenter: not found (or not executable): ", "/karpenter, ", "karpenter-crds/karpenter.sh_nodepools.yaml", "make karpenter"}},
		{name: "admission policies from a config without PlacementPolicy", opts: Options{Assets: assets, Scenario: loadScenario(t, tutorial), Configs: []string{shippedConfig}, AdmissionPolicies: true},
			want: []string{"--admission-policies: scheduler config " + shippedConfig, "nothing to render: no profile runs PlacementPolicy", "and no profile holds OnDemandShare policies"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			var progress bytes.Buffer
			tt.opts.Timeout, tt.opts.WorkDir, tt.opts.Progress = time.Minute, t.TempDir(), &progress
			s, err := Play(ctx, tt.opts)
			var ie *InputError
			var ae *AssetsError
			if tt.wantAssets && !errors.As(err, &ae) || !tt.wantAssets && !errors.As(err, &ie) {
				t.Fatalf("error %v (%T), want an *AssetsError: %v", err, err, tt.wantAssets)
			}
			if s != nil {
				t.Errorf("session %+v, want none", s)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if progress.Len() > 0 {
				t.Errorf("progress %q: something started for bad input", progress.String())
			}
		})
	}
}

// TestPlayKarpenterWithoutAdmission is issue 21's failure mode through the
// playground: the ledger's pods carry no affinity, so Karpenter adds a node
// of its preferred us-east-1 pool, which PlacementPolicy refuses them. The
// run must wait for Karpenter's node (the pods are unschedulable before it
// exists) and then end, once Karpenter is idle, with the ledger
// unschedulable: not time out, and not end before Karpenter acted.
func TestPlayKarpenterWithoutAdmission(t *testing.T) {
	s, progress := play(t, Options{Scenario: loadScenario(t, karpenterScenario), Configs: []string{karpenterConfig}, Karpenter: true})
	r := s.Runs[0].Result
	if r.Karpenter == nil {
		t.Fatalf("no Karpenter in the result %+v", r)
	}
	type added struct {
		Region, NodePool string
		Pods             int
	}
	var got []added
	for _, n := range r.Karpenter.Nodes {
		got = append(got, added{n.Region, n.NodePool, n.Pods})
	}
	// Two ledger pods fit beside web on us-system as Karpenter sees it, two
	// more on one small US node.
	want := []added{{Region: "us-east-1", NodePool: "region-us-east-1"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("nodes Karpenter added (-want +got):\n%s", diff)
	}
	for _, p := range r.Pods {
		wantBound := strings.HasPrefix(p.Name, "web-")
		if (p.Node != "") != wantBound {
			t.Errorf("pod %s/%s on %q (%s), want bound: %v", p.Namespace, p.Name, p.Node, p.Reason, wantBound)
		}
		if !wantBound && !strings.Contains(p.Reason, `placement rule "eu-data-residency"`) {
			t.Errorf("pod %s: reason %q does not name the rule", p.Name, p.Reason)
		}
	}
	if !strings.Contains(progress, "Karpenter is idle: 4 pods stay unbound") {
		t.Errorf("progress does not say Karpenter was idle")
	}
	if r.Karpenter.DefaultNodePool {
		t.Errorf("default NodePool made, but the scenario has two")
	}
	var buf bytes.Buffer
	if err := report.WriteText(&buf, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "nodes Karpenter added (NodePools: region-eu-west-1, region-us-east-1):") {
		t.Errorf("text output lacks the nodes Karpenter added:\n%s", buf.String())
	}
}

// TestPlayKarpenterDefaultNodePool: a scenario without a NodePool gets the
// playground's default one, and a pod no node of the scenario fits is bound
// to the on-demand node Karpenter adds from it. Before, Karpenter had no
// pool and the pod ended unschedulable.
func TestPlayKarpenterDefaultNodePool(t *testing.T) {
	small := writeTemp(t, "small.yaml", `nodes:
  - name: small
    allocatable: {cpu: 500m}
objects:
  - apiVersion: v1
    kind: Pod
    metadata: {name: big}
    spec:
      containers:
        - {name: c, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: "1"}}}
`)
	s, progress := play(t, Options{Scenario: loadScenario(t, small), Configs: []string{defaultProfile}, Karpenter: true})
	r := s.Runs[0].Result
	if !strings.Contains(progress, "the scenario has no NodePool, without which Karpenter adds nothing: made NodePool default") {
		t.Errorf("progress does not say the default NodePool was made")
	}
	if r.Karpenter == nil || !r.Karpenter.DefaultNodePool || len(r.Karpenter.Nodes) != 1 {
		t.Fatalf("karpenter %+v, want the default pool and one node", r.Karpenter)
	}
	n := r.Karpenter.Nodes[0]
	type summary struct {
		NodePool, CapacityType string
		Pods                   int
		PodNode                string
	}
	got := summary{n.NodePool, n.CapacityType, n.Pods, r.Pods[0].Node}
	if diff := cmp.Diff(summary{"default", "on-demand", 1, n.Name}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// The HTML report's facts of the node: its labels and the big pod's
	// request of its allocatable.
	if n.Node.Labels["karpenter.sh/nodepool"] != "default" || n.Node.CPU.Requested != 1000 || n.Node.CPU.Allocatable < 1000 {
		t.Errorf("added node's facts: labels %v, cpu %+v; want its labels and the big pod's 1000m of its allocatable", n.Node.Labels, n.Node.CPU)
	}
}
