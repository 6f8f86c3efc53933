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

package plugins

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/expfmt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/klog/v2/ktesting"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/apis/config/scheme"
)

// ourMetrics are the metrics of /work/notes/metrics-spec.md (issue 22),
// which the dashboard, the alerts and the integration test query by name.
var ourMetrics = []string{
	"maintenancewindow_nodes",
	"maintenancewindow_pending_retries",
	"maintenancewindow_retries_dropped_total",
	"maintenancewindow_retries_fired_total",
	"maintenancewindow_retries_planned_total",
	"nodelesspods_count_lookups_total",
	"nodelesspods_memo_nodes",
	"placementpolicy_rule_applied_total",
	"placementpolicy_unschedulable_total",
}

// ourPrefixes are the plugins' subsystems.
var ourPrefixes = []string{"placementpolicy_", "maintenancewindow_", "nodelesspods_"}

// pluginArgs returns each plugin's defaulted args; PlacementPolicy gets a
// Require and a Prefer rule, so that both of its counters have series.
func pluginArgs(t *testing.T, name string) runtime.Object {
	t.Helper()
	args, err := scheme.DefaultArgs(name)
	if err != nil {
		t.Fatal(err)
	}
	if pp, ok := args.(*config.PlacementPolicyArgs); ok {
		nodes := &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}}
		pp.Rules = []config.PlacementRule{
			{Name: "require", Namespaces: []string{"payments"}, NodeSelector: nodes, Action: config.PlacementRequire},
			{Name: "prefer", Namespaces: []string{"batch"}, NodeSelector: nodes, Action: config.PlacementPrefer, Weight: 1},
		}
	}
	return args
}

// TestMetricNames builds every plugin on a handle like the scheduler's and
// checks that /metrics then holds exactly the metrics of the spec under our
// subsystems, and that they pass component-base's promlint, the linter of
// the Kubernetes instrumentation guidelines.
func TestMetricNames(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	fh, err := frameworkruntime.NewFramework(ctx, nil, &schedconfig.KubeSchedulerProfile{SchedulerName: "lint"},
		frameworkruntime.WithInformerFactory(factory), frameworkruntime.WithSnapshotSharedLister(cache.NewEmptySnapshot()))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range All() {
		if p.NoArgs {
			// NodePoolQuota: New needs an API server that serves
			// NodePoolQuotas, and its one counter has no series before
			// its first rejection, so /metrics would not list it here.
			continue
		}
		if _, err := p.Factory(ctx, pluginArgs(t, p.Name), fh); err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
	}

	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var text bytes.Buffer
	for _, f := range families {
		if !slices.ContainsFunc(ourPrefixes, func(p string) bool { return strings.HasPrefix(f.GetName(), p) }) {
			continue
		}
		names = append(names, f.GetName())
		if _, err := expfmt.MetricFamilyToText(&text, f); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(names)
	if diff := cmp.Diff(ourMetrics, names); diff != "" {
		t.Errorf("our metrics on /metrics (-spec +got):\n%s", diff)
	}
	if problems := lint(t, text.String()); len(problems) > 0 {
		t.Errorf("promlint:\n%s", strings.Join(problems, "\n"))
	}
}

// TestLintCanFail shows that the lint above finds badly named metrics.
func TestLintCanFail(t *testing.T) {
	tests := []struct {
		name, text string
	}{
		{
			name: "counter without _total",
			text: "# HELP placementpolicy_rule_applied Attempts.\n# TYPE placementpolicy_rule_applied counter\nplacementpolicy_rule_applied{profile=\"p\"} 1\n",
		},
		{
			name: "camelCase",
			text: "# HELP nodelesspods_memoNodes Nodes.\n# TYPE nodelesspods_memoNodes gauge\nnodelesspods_memoNodes{profile=\"p\"} 1\n",
		},
		{
			name: "no help",
			text: "# TYPE maintenancewindow_nodes gauge\nmaintenancewindow_nodes{profile=\"p\"} 1\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if problems := lint(t, tc.text); len(problems) == 0 {
				t.Errorf("promlint found no problem in:\n%s", tc.text)
			}
		})
	}
}

func lint(t *testing.T, text string) []string {
	t.Helper()
	problems, err := testutil.NewPromLinter(strings.NewReader(text)).Lint()
	if err != nil {
		t.Fatalf("promlint: %v", err)
	}
	var out []string
	for _, p := range problems {
		out = append(out, p.String())
	}
	return out
}
