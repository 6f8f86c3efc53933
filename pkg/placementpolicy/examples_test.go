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

package placementpolicy

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

// exampleArgs loads one of manifests/placementpolicy's configs the way
// kube-scheduler --config does and returns its PlacementPolicy args.
func exampleArgs(t *testing.T, file string) *config.PlacementPolicyArgs {
	t.Helper()
	logger, _ := ktesting.NewTestContext(t)
	cfg, err := options.LoadConfigFromFile(logger, filepath.Join("..", "..", "manifests", "placementpolicy", file))
	if err != nil {
		t.Fatalf("loading %s: %v", file, err)
	}
	for _, pc := range cfg.Profiles[0].PluginConfig {
		if pc.Name == Name {
			return pc.Args.(*config.PlacementPolicyArgs)
		}
	}
	t.Fatalf("%s has no %s args", file, Name)
	return nil
}

// TestSpotExample checks what spot-config.yaml promises for each provider's
// spot label: batch pods prefer the node, critical pods never land on it.
func TestSpotExample(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pl := newPlugin(t, exampleArgs(t, "spot-config.yaml"))
	batch := st.MakePod().Name("batch").Namespace("default").Label("workload", "batch").Obj()
	critical := st.MakePod().Name("critical").Namespace("default").Label("criticality", "critical").Obj()
	providers := map[string][]string{
		"karpenter": {"karpenter.sh/capacity-type", "spot"},
		"eks":       {"eks.amazonaws.com/capacityType", "SPOT"},
		"gke":       {"cloud.google.com/gke-spot", "true"},
		"aks":       {"kubernetes.azure.com/scalesetpriority", "spot"},
	}
	onDemand := []*v1.Node{
		node("karpenter-on-demand", "karpenter.sh/capacity-type", "on-demand"),
		node("eks-on-demand", "eks.amazonaws.com/capacityType", "ON_DEMAND"),
		node("unlabelled"),
	}
	for provider, label := range providers {
		t.Run(provider, func(t *testing.T) {
			spot := node(provider+"-spot", label...)
			nodes := append([]*v1.Node{spot}, onDemand...)
			_, got := runFilter(t, pl, critical, nodes...)
			want := map[string]string{spot.Name: `node(s) didn't match placement rule "critical-never-on-spot"`}
			for _, n := range onDemand {
				want[n.Name] = ""
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("critical pod, Filter (-want +got):\n%s", diff)
			}

			state := framework.NewCycleState()
			if status := pl.PreScore(ctx, state, batch, nil); !status.IsSuccess() {
				t.Fatalf("PreScore: %v", status)
			}
			var scores fwk.NodeScoreList
			for _, n := range nodes {
				ni := framework.NewNodeInfo()
				ni.SetNode(n)
				s, status := pl.Score(ctx, state, batch, ni)
				if !status.IsSuccess() {
					t.Fatalf("Score(%s): %v", n.Name, status)
				}
				scores = append(scores, fwk.NodeScore{Name: n.Name, Score: s})
			}
			pl.NormalizeScore(ctx, state, batch, scores)
			for _, s := range scores {
				want := int64(0)
				if s.Name == spot.Name {
					want = fwk.MaxNodeScore
				}
				if s.Score != want {
					t.Errorf("batch pod, node %s scores %d, want %d", s.Name, s.Score, want)
				}
			}
		})
	}
}

// TestExamplesLoad loads every example config through the scheduler's own
// loader (strict decoding, defaulting) and builds the plugin from it.
func TestExamplesLoad(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "manifests", "placementpolicy", "*.yaml"))
	if err != nil || len(files) < 3 {
		t.Fatalf("want at least 3 example configs, found %v (%v)", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			args := exampleArgs(t, filepath.Base(f))
			if len(args.Rules) == 0 {
				t.Errorf("%s has no rules", f)
			}
			newPlugin(t, args, testNamespaces...)
		})
	}
}

// TestDataResidencyExample checks both of its rules: by namespace name and by
// namespace label.
func TestDataResidencyExample(t *testing.T) {
	pl := newPlugin(t, exampleArgs(t, "data-residency-config.yaml"), testNamespaces...)
	nodes := []*v1.Node{node("eu", regionKey, "eu-central-1"), node("us", regionKey, "us-east-1")}
	for _, tc := range []struct {
		ns, rule string
	}{
		{ns: "payments", rule: "eu-data-residency"},
		{ns: "analytics", rule: "eu-data-residency-by-label"},
	} {
		_, got := runFilter(t, pl, st.MakePod().Name("p").Namespace(tc.ns).Obj(), nodes...)
		want := map[string]string{"eu": "", "us": `node(s) didn't match placement rule "` + tc.rule + `"`}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("pod in %s (-want +got):\n%s", tc.ns, diff)
		}
	}
	if skipped, _ := runFilter(t, pl, st.MakePod().Name("p").Namespace("kube-system").Obj(), nodes...); !skipped {
		t.Errorf("kube-system is excluded, yet PreFilter did not skip its pod")
	}
}
