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

package integration

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/component-base/metrics/testutil"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	v1config "github.com/adminsched/scheduler-plugins/apis/config/v1"
	"github.com/adminsched/scheduler-plugins/internal/testconfig"
	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

// poolLabel confines each group of the scenario's pods to its nodes
// (NodeAffinity filters before our plugins), so that each metric moves only
// by what its group does.
const poolLabel = "metrics.adminsched.io/pool"

// ourMetrics are the metrics of /work/notes/metrics-spec.md (issue 22).
var ourMetrics = []string{
	"placementpolicy_rule_applied_total",
	"placementpolicy_unschedulable_total",
	"maintenancewindow_nodes",
	"maintenancewindow_retries_planned_total",
	"maintenancewindow_retries_fired_total",
	"maintenancewindow_retries_dropped_total",
	"maintenancewindow_pending_retries",
	"nodelesspods_count_lookups_total",
	"nodelesspods_memo_nodes",
}

// metricsConfig enables the three plugins: PlacementPolicy with a Require
// rule no node satisfies (gpu-only) and one some do (eu-residency),
// MaintenanceWindow avoiding windows that open within 10 minutes, and
// NodeLessPods at score.
func (tc *testContext) metricsConfig() *configv1.KubeSchedulerConfiguration {
	rules := []v1config.PlacementRule{
		{Name: "gpu-only", Namespaces: []string{tc.ns}, PodSelector: labelled("metrics.adminsched.io/needs", "gpu"),
			NodeSelector: labelled("metrics.adminsched.io/gpu", "true"), Action: v1config.PlacementRequire},
		{Name: "eu-residency", Namespaces: []string{tc.ns}, PodSelector: labelled("metrics.adminsched.io/data", "eu"),
			NodeSelector: nodesWhere(regionLabel, metav1.LabelSelectorOpIn, "eu-west-1"), Action: v1config.PlacementRequire},
	}
	p := configv1.KubeSchedulerProfile{
		SchedulerName: ptr.To(schedulerName),
		Plugins: &configv1.Plugins{
			MultiPoint: testconfig.Plugins(1, "PlacementPolicy", "MaintenanceWindow"),
			Score:      testconfig.Plugins(3, "NodeLessPods"),
		},
		PluginConfig: []configv1.PluginConfig{
			testconfig.Args("PlacementPolicy", &v1config.PlacementPolicyArgs{Rules: rules}),
			testconfig.Args("MaintenanceWindow", &v1config.MaintenanceWindowArgs{AvoidWithin: &metav1.Duration{Duration: 10 * time.Minute}}),
		},
	}
	return schedulerConfig(p)
}

// metricsToken returns a token of a new ServiceAccount that may GET
// /metrics and nothing else, as the chart's metrics-reader ClusterRole
// grants Prometheus.
func (tc *testContext) metricsToken() string {
	tc.t.Helper()
	const sa = "metrics-reader"
	name := "metrics-reader-" + tc.ns
	if _, err := adminClient.CoreV1().ServiceAccounts(tc.ns).Create(tc.ctx, &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
		tc.t.Fatal(err)
	}
	rbac := adminClient.RbacV1()
	if _, err := rbac.ClusterRoles().Create(tc.ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}, metav1.CreateOptions{}); err != nil {
		tc.t.Fatal(err)
	}
	tc.t.Cleanup(func() { _ = rbac.ClusterRoles().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	if _, err := rbac.ClusterRoleBindings().Create(tc.ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: tc.ns}},
	}, metav1.CreateOptions{}); err != nil {
		tc.t.Fatal(err)
	}
	tc.t.Cleanup(func() { _ = rbac.ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	tr, err := adminClient.CoreV1().ServiceAccounts(tc.ns).CreateToken(tc.ctx, sa, tokenRequest(), metav1.CreateOptions{})
	if err != nil {
		tc.t.Fatal(err)
	}
	return tr.Status.Token
}

// poolPod is a pod of the scenario, kept to the nodes of pool.
func (tc *testContext) poolPod(name, pool string, labels map[string]string) *v1.Pod {
	pod := tc.makePod(name)
	pod.Spec.NodeSelector = map[string]string{poolLabel: pool}
	maps.Copy(pod.Labels, labels)
	return pod
}

// want is one series and its value.
type want struct {
	name   string
	labels map[string]string
	value  float64
}

func (w want) key() string {
	var l []string
	for _, k := range slices.Sorted(maps.Keys(w.labels)) {
		l = append(l, fmt.Sprintf("%s=%q", k, w.labels[k]))
	}
	return w.name + "{" + strings.Join(l, ",") + "}"
}

// TestMetrics runs the binary with the three plugins on the API server, plays
// a scenario that gives each of our metrics a known value, and scrapes
// /metrics with a token allowed only that, as Prometheus does:
//   - PlacementPolicy: 3 pods the eu-residency rule admits (it rejects the US
//     node, but they fit elsewhere) and 2 that gpu-only makes unschedulable;
//     each is attempted once, so the counters are exact;
//   - MaintenanceWindow: 8 nodes, of which one in an open window, one whose
//     window opens within avoidWithin, one whose window opens later within
//     the horizon, one with an invalid annotation, and one whose window ends
//     8 s after the scheduler is ready (open, then no longer counted); 2
//     pods rejected by the windows (2 retries planned), of which one is
//     deleted (dropped), and one rejected by the ending window and retried
//     when it ends (fired);
//   - NodeLessPods: the 2 EU nodes in the memo, and lookups while it scores
//     them (a bound only: how many hit depends on batching and timing).
//
// Then it checks that every series the dashboard and the PrometheusRule
// query exists in the scrape.
func TestMetrics(t *testing.T) {
	tc := newTestContext(t)
	pool := func(p string) nodeOption { return withLabels(map[string]string{poolLabel: p}) }
	eu, us := withLabels(map[string]string{regionLabel: "eu-west-1"}), withLabels(map[string]string{regionLabel: "us-east-1"})
	tc.createNodes(
		makeNode("met-eu-1", pool("plain"), eu), makeNode("met-eu-2", pool("plain"), eu), makeNode("met-us", pool("plain"), us),
		makeNode("met-open", pool("window"), withWindow(windowFrom(-time.Hour, 2*time.Hour))),
		makeNode("met-avoided", pool("window"), withWindow(windowFrom(5*time.Minute, time.Hour))),
		makeNode("met-ending", pool("ending"), withWindow(windowFrom(-time.Hour, time.Hour))),
		makeNode("met-upcoming", pool("idle"), withWindow(windowFrom(2*time.Hour, 3*time.Hour))),
		makeNode("met-invalid", pool("idle"), withWindow("tomorrow morning")),
	)
	token := tc.metricsToken()
	serving, port := tc.servingArgs()
	args := append([]string{"--config=" + testconfig.Write(t, tc.metricsConfig()),
		// Out of a cluster, the secure port's delegated authentication
		// and authorization need a kubeconfig, or every token is refused.
		"--authentication-kubeconfig=" + adminKubeconfig, "--authorization-kubeconfig=" + adminKubeconfig}, serving...)
	tc.runBinary("metrics-scheduler", args...)
	checkReadyz(t, tc.ctx, port)
	// The window of met-ending ends only once the scheduler is up, so that
	// the pod it rejects is attempted before the end even on a loaded
	// machine. No pod exists yet for the node update to requeue. RFC 3339
	// has whole seconds: it ends 7 to 8 s from now.
	ending := time.Now().UTC().Add(8 * time.Second).Truncate(time.Second)
	tc.annotateNode("met-ending", time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)+"/"+ending.Format(time.RFC3339))

	var admitted, gpu []string
	for i := range 3 {
		admitted = append(admitted, tc.createPod(tc.poolPod(fmt.Sprintf("eu-%d", i), "plain", map[string]string{"metrics.adminsched.io/data": "eu"})).Name)
	}
	for i := range 2 {
		gpu = append(gpu, tc.createPod(tc.poolPod(fmt.Sprintf("gpu-%d", i), "plain", map[string]string{"metrics.adminsched.io/needs": "gpu"})).Name)
	}
	tc.createPod(tc.poolPod("wait-0", "window", nil))
	tc.createPod(tc.poolPod("wait-1", "window", nil))
	tc.createPod(tc.poolPod("retried", "ending", nil))
	for name, node := range tc.waitScheduled(admitted...) {
		if node != "met-eu-1" && node != "met-eu-2" {
			t.Errorf("pod %s landed on %s, want an EU node", name, node)
		}
	}
	for _, name := range append(gpu, "wait-0", "wait-1") {
		tc.failedSchedulingMessage(name)
	}
	tc.deletePod(tc.ns, "wait-1")
	if node := tc.waitScheduled("retried")["retried"]; node != "met-ending" {
		t.Errorf("pod retried landed on %s, want met-ending", node)
	}
	t.Logf("retried was bound %v after its window ended", time.Since(ending).Round(100*time.Millisecond))

	profile := map[string]string{"profile": schedulerName}
	with := func(k, v string) map[string]string {
		l := maps.Clone(profile)
		l[k] = v
		return l
	}
	rule := func(r string) map[string]string { return with("rule", r) }
	// The met- nodes announce their windows in our annotation only.
	state := func(s string) map[string]string {
		l := with("state", s)
		l["source"] = "annotation"
		return l
	}
	wants := []want{
		{"placementpolicy_rule_applied_total", rule("eu-residency"), 3},
		{"placementpolicy_rule_applied_total", rule("gpu-only"), 2},
		{"placementpolicy_unschedulable_total", rule("eu-residency"), 0},
		{"placementpolicy_unschedulable_total", rule("gpu-only"), 2},
		{"maintenancewindow_nodes", state("open"), 1},
		{"maintenancewindow_nodes", state("avoided"), 1},
		{"maintenancewindow_nodes", state("upcoming"), 1},
		{"maintenancewindow_nodes", state("invalid"), 1},
		{"maintenancewindow_retries_planned_total", profile, 3},
		{"maintenancewindow_retries_fired_total", profile, 1},
		{"maintenancewindow_retries_dropped_total", profile, 1},
		{"maintenancewindow_pending_retries", profile, 1},
		// The framework's gauge, for the alerts on it.
		{"scheduler_unschedulable_pods", with("plugin", "PlacementPolicy"), 2},
		{"scheduler_unschedulable_pods", with("plugin", "MaintenanceWindow"), unschedulableAfterDelete(1)},
	}
	var s scrape
	var body string
	var got map[string]float64
	wantValues := map[string]float64{}
	for _, w := range wants {
		wantValues[w.key()] = w.value
	}
	// At-scrape gauges follow the informers: poll until they settle.
	err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, 15*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		if s, body, err = scrapeMetrics(ctx, port, token); err != nil {
			t.Logf("scrape: %v", err)
			return false, nil
		}
		got = map[string]float64{}
		for _, w := range wants {
			if v, ok := s.value(w.name, w.labels); ok {
				got[w.key()] = v
			}
		}
		return maps.Equal(got, wantValues), nil
	})
	if err != nil {
		t.Errorf("metrics after the scenario (-want, +got; a missing series is absent from got): %v\n%s", err, cmp.Diff(wantValues, got))
	}
	if s == nil {
		t.Fatal("no scrape of /metrics")
	}
	var lookups float64
	byResult := map[string]float64{}
	for _, result := range []string{"hit", "tail", "scan"} {
		v, ok := s.value("nodelesspods_count_lookups_total", with("result", result))
		if !ok {
			t.Errorf("no series nodelesspods_count_lookups_total{result=%q}", result)
		}
		lookups += v
		byResult[result] = v
	}
	t.Logf("NodeLessPods lookups %v", byResult)
	if lookups == 0 {
		t.Errorf("nodelesspods_count_lookups_total is 0 over hit, tail and scan, after NodeLessPods scored %d pods on 2 nodes", len(admitted))
	}
	// Only the EU pods had two feasible nodes: the others had one or none,
	// and the framework scores no pod that has a single feasible node.
	if v, ok := s.value("nodelesspods_memo_nodes", profile); !ok || v != 2 {
		t.Errorf("nodelesspods_memo_nodes = %v (present: %v), want 2 (met-eu-1 and met-eu-2, the only nodes scored)", v, ok)
	}
	for _, name := range ourMetrics {
		if !strings.Contains(body, "# HELP "+name+" [ALPHA] ") {
			t.Errorf("/metrics has no ALPHA help for %s", name)
		}
	}
	// The Prometheus naming rules (component-base's promlint) over our
	// metrics as the binary exposes them.
	problems, err := testutil.NewPromLinter(strings.NewReader(body)).Lint()
	if err != nil {
		t.Fatalf("linting /metrics: %v", err)
	}
	for _, p := range problems {
		if slices.Contains(ourMetrics, p.Metric) {
			t.Errorf("metric lint: %s", p.String())
		}
	}
	if t.Failed() {
		t.Logf("our series on /metrics:\n%s", ourSeries(body))
	}

	t.Run("dashboard and alert series", func(t *testing.T) {
		queries := append(dashboardQueries(t, readDashboard(t)), ruleQueries(t, renderChart(t, "adminsched-system", monitoringOn...))...)
		// The OnDemandShare panels select the controller's series (another
		// binary) and the guard plugin's counter: checked against their
		// definitions.
		queries, undefined, err := definedQueries(queries, "ondemandshare_", onDemandShareMetrics(t))
		if err != nil {
			t.Fatal(err)
		}
		if len(undefined) > 0 {
			t.Errorf("OnDemandShare queries select metrics nobody defines:\n%s", strings.Join(undefined, "\n"))
		}
		// The NodePoolQuota panels and alert select the controller's gauges
		// (another binary) and the plugin's counter, which has no series
		// until a limit rejects a node: checked against their definitions.
		queries, undefined, err = definedQueries(queries, "nodepoolquota_", nodePoolQuotaMetrics(t))
		if err != nil {
			t.Fatal(err)
		}
		if len(undefined) > 0 {
			t.Errorf("NodePoolQuota queries select metrics nobody defines:\n%s", strings.Join(undefined, "\n"))
		}
		// The framework records plugin execution times in 10% of the
		// cycles, and buffers them for up to a second before /metrics has
		// them: schedule pods 10 at a time until it has recorded one of
		// ours, waiting out a flush after each batch (at most 200 pods,
		// which all miss it with probability 0.9^200).
		ours := selector{metric: "scheduler_plugin_execution_duration_seconds_bucket",
			matchers: []matcher{{label: "plugin", op: "=~", value: "NodeLessPods|PlacementPolicy|MaintenanceWindow"}}}
		for batch := 0; s.missingSeries(ours) != "" && batch < 20; batch++ {
			var names []string
			for i := range 10 {
				names = append(names, tc.createPod(tc.poolPod(fmt.Sprintf("filler-%d-%d", batch, i), "plain", nil)).Name)
			}
			tc.waitScheduled(names...)
			for deadline := time.Now().Add(2500 * time.Millisecond); ; {
				var err error
				if s, _, err = scrapeMetrics(tc.ctx, port, token); err != nil {
					t.Fatal(err)
				}
				if s.missingSeries(ours) == "" || time.Now().After(deadline) {
					break
				}
				time.Sleep(250 * time.Millisecond)
			}
		}
		dead, err := s.deadQueries(queries)
		if err != nil {
			t.Fatal(err)
		}
		if len(dead) > 0 {
			t.Errorf("%d queries select series /metrics does not have:\n%s", len(dead), strings.Join(dead, "\n"))
		}

		// The same check with one of our metrics renamed reports what uses
		// it (besides what it reported above).
		renamed := maps.Clone(s)
		renamed["placementpolicy_unschedulable_attempts_total"] = renamed["placementpolicy_unschedulable_total"]
		delete(renamed, "placementpolicy_unschedulable_total")
		before := dead
		if dead, err = renamed.deadQueries(queries); err != nil {
			t.Fatal(err)
		}
		dead = slices.DeleteFunc(dead, func(d string) bool { return slices.Contains(before, d) })
		wantDead := []string{
			"alert PlacementPolicyHoldingPods: no metric placementpolicy_unschedulable_total",
			"panel Unschedulable attempts by rule: no metric placementpolicy_unschedulable_total",
		}
		if diff := cmp.Diff(wantDead, dead); diff != "" {
			t.Errorf("with placementpolicy_unschedulable_total renamed, dead queries (-want, +got):\n%s", diff)
		}
	})
}

// ourSeries returns the lines of the exposition that hold our metrics.
func ourSeries(body string) string {
	var lines []string
	for _, l := range strings.Split(body, "\n") {
		for _, name := range ourMetrics {
			if strings.HasPrefix(l, name) {
				lines = append(lines, l)
			}
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// unschedulableAfterDelete is what the framework's scheduler_unschedulable_pods
// gauge shows for a plugin that rejected want pods still pending, after the
// test deleted one more (wait-1). 1.35's scheduling queue does not take a
// deleted pod out of the gauge (kubernetes/kubernetes#135981, fixed in 1.36),
// so it shows the deleted pod too.
func unschedulableAfterDelete(want float64) float64 {
	if kubeversion.Minor < 36 {
		return want + 1
	}
	return want
}
