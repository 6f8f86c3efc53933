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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/klog/v2/ktesting"

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
	"github.com/adminsched/scheduler-plugins/internal/playground/schedconfig"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

// checkOnDemandShare: examples/scenarios/ondemand-share.yaml with the
// admission policy and the controller. Slots 1, 4, 7 of 10 and 11, 14, 17
// of 20 are on-demand, so exactly 3, 6, 6 (spot-1 lost) and 2 pods run on
// on-demand nodes; every pod was decided (its class label) and runs on a
// node of its class.
func checkOnDemandShare(t *testing.T, runs []report.Run, progress string) {
	r := runs[0].Result
	at := func(after string, pods, onDemand, required int) report.ShareResult {
		return report.ShareResult{After: after, Workload: "Deployment shop/web", Policy: "web", Pods: pods, OnDemand: onDemand, Required: required}
	}
	want := []report.ShareResult{
		at(report.AfterObjects, 10, 3, 3),
		at("scale Deployment shop/web to 20", 20, 6, 6),
		at("delete nodes spot-1", 20, 6, 6),
		at("scale Deployment shop/web to 5", 5, 2, 2),
	}
	if diff := cmp.Diff(want, r.Share); diff != "" {
		t.Errorf("on-demand share (-want +got):\n%s", diff)
	}
	if len(r.Applied) != 10 || len(r.Steps) != 3 || len(r.Steps[0].Pods) != 20 {
		t.Errorf("%d pods once the objects settled (want 10), %d steps (want 3): the pods after each step are not kept", len(r.Applied), len(r.Steps))
	}
	checkDecided(t, r.Pods)
	if len(r.Steps) == 3 {
		checkDecided(t, r.Steps[1].Pods)
	}
	for _, line := range []string{
		"starting the OnDemandShare controller (1 policy) for the pods the admission policies gate\n",
		"on-demand share: Deployment shop/web: 6/6 on-demand of 20 pods (policy web)\n",
	} {
		if !strings.Contains(progress, line) {
			t.Errorf("progress lacks %q:\n%s", line, progress)
		}
	}
}

// checkDecided: every pod carries the class the controller decided and
// runs on a node of that class (the scenario names its nodes by class).
func checkDecided(t *testing.T, pods []report.PodResult) {
	t.Helper()
	for _, p := range pods {
		class := p.Labels[share.ClassLabel]
		if class == "" || !strings.HasPrefix(p.Node, class+"-") {
			t.Errorf("pod %s: class %q on node %q, want a decided class and a node of it", p.Name, class, p.Node)
		}
	}
}

// TestRenderSharePolicies: --admission-policies renders a config's
// OnDemandShare policies (and, there being no PlacementPolicy rule, only
// those) and hands their compiled form to the controller.
func TestRenderSharePolicies(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	const config = scenarios + "ondemand-share-config.yaml"
	data, err := schedconfig.Read(config, nil)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := schedconfig.Prepare(logger, config, data, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	got, err := renderPolicies(sc)
	if err != nil {
		t.Fatal(err)
	}
	if got.placement != nil || got.share == nil || len(got.share.Policies) != 1 || got.share.Policies[0].Policy.Name != "ondemandshare-web" {
		t.Errorf("rendered placement %v, share %v: want the policy ondemandshare-web alone", got.placement, got.share)
	}
	if len(got.shared) != 1 || got.shared[0].Name != "web" || got.shared[0].MinPercent != 30 {
		t.Errorf("compiled %v, want the policy web at 30%%", got.shared)
	}
}
