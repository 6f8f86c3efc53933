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
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// monitoringOn renders the dashboard ConfigMap and the PrometheusRule.
var monitoringOn = []string{"--set", "monitoring.dashboard.enabled=true", "--set", "monitoring.prometheusRule.enabled=true"}

// licenseDriverAlerts are the alerts on the license driver's metrics, in
// the order the chart renders them, after the scheduler's.
var licenseDriverAlerts = []string{"LicenseSeatHeldTwice", "LicenseFeatureOverLimit", "LicenseSourceStale"}

// licenseDriverMetricsFile defines the license driver controller's metrics.
const licenseDriverMetricsFile = "../../internal/licensedriver/controller/metrics.go"

// onDemandShareAlerts are the alerts on the OnDemandShare controller's
// metrics, rendered last, with the controller.
var onDemandShareAlerts = []string{"OnDemandShareBelowMinimum"}

// onDemandShareMetricsFiles define the OnDemandShare controller's metrics
// and the guard plugin's.
var onDemandShareMetricsFiles = []string{"../../pkg/ondemandshare/controller/metrics.go", "../../pkg/ondemandshare/metrics.go"}

// nodePoolQuotaAlerts are the alerts on the NodePoolQuota controller's
// metrics, rendered last, with the controller.
var nodePoolQuotaAlerts = []string{"NodePoolQuotaTeamHeld"}

// nodePoolQuotaMetricsFiles define the NodePoolQuota controller's gauges
// and the plugin's rejection counter.
var nodePoolQuotaMetricsFiles = []string{"../../pkg/nodepoolquota/controller/metrics.go", "../../pkg/nodepoolquota/metrics.go"}

// nodePoolQuotaMetrics returns the names of the metrics the NodePoolQuota
// controller and plugin define, read from their source. The gauges are
// another binary's than the scheduler TestMetrics scrapes, and the plugin's
// counter has no series until a limit rejects a node: the queries on them
// are checked against the definitions.
func nodePoolQuotaMetrics(t testing.TB) []string {
	t.Helper()
	var names []string
	for _, file := range nodePoolQuotaMetricsFiles {
		names = append(names, definedMetrics(t, file)...)
	}
	return names
}

// onDemandShareMetrics returns the names of the metrics the OnDemandShare
// controller and guard plugin define, read from their source as
// licenseDriverMetrics reads the driver's (the workload gauges are made by
// workloadGauge("<Name>", ...)). The controller is another binary than the
// scheduler TestMetrics scrapes, and the plugin's counter has no series
// until a pod goes undecided: the queries on them are checked against the
// definitions.
func onDemandShareMetrics(t testing.TB) []string {
	t.Helper()
	var names []string
	for _, file := range onDemandShareMetricsFiles {
		names = append(names, definedMetrics(t, file, `workloadGauge\("([a-z_]+)"`)...)
	}
	return names
}

// licenseDriverMetrics returns the names of the metrics the license driver
// controller defines, read from its source: <subsystem>_<Name> of each
// metric there. TestMetrics checks the scheduler's alerts against a scrape
// of the scheduler; the driver's alarm gauges have no series until an alarm
// is raised, so its alerts are checked against the definitions.
func licenseDriverMetrics(t testing.TB) []string {
	t.Helper()
	return definedMetrics(t, licenseDriverMetricsFile)
}

// definedMetrics returns <subsystem>_<Name> of each metric file defines,
// by its Subsystem and Name fields or by the first group of a pattern of
// more.
func definedMetrics(t testing.TB, file string, more ...string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sub := regexp.MustCompile(`(?m)^const subsystem = "([a-z_]+)"$`).FindSubmatch(data)
	if sub == nil {
		t.Fatalf("%s: no const subsystem", file)
	}
	var names []string
	for _, pattern := range append([]string{`Subsystem:\s+subsystem,\s+Name:\s+"([a-z_]+)"`}, more...) {
		for _, m := range regexp.MustCompile(pattern).FindAllSubmatch(data, -1) {
			names = append(names, string(sub[1])+"_"+string(m[1]))
		}
	}
	if len(names) == 0 {
		t.Fatalf("%s: no metric definition found", file)
	}
	return names
}

// ruleAlerts returns the alerts of a PrometheusRule, in order.
func ruleAlerts(rule *unstructured.Unstructured) []map[string]any {
	var out []map[string]any
	groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
	for _, g := range groups {
		rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
		for _, x := range rules {
			out = append(out, x.(map[string]any))
		}
	}
	return out
}

// TestDashboardPromQLSelectors holds the tokenizer that the series check
// relies on to what PromQL means: the metric names and matchers of each
// selector, none of the functions, keywords, label lists, durations or
// template variables.
func TestDashboardPromQLSelectors(t *testing.T) {
	for _, tt := range []struct {
		name, expr string
		want       []string
	}{
		{"a bare name", `up`, []string{`up{}`}},
		{"a rate over a template interval",
			`sum by (result) (rate(scheduler_schedule_attempts_total{job=~"$job", profile=~"$profile"}[$__rate_interval]))`,
			[]string{`scheduler_schedule_attempts_total{job=~"$job",profile=~"$profile"}`}},
		{"a quantile of a histogram",
			`histogram_quantile(0.99, sum by (plugin, extension_point, le) (rate(x_bucket{plugin=~"A|B"}[5m])))`,
			[]string{`x_bucket{plugin=~"A|B"}`}},
		{"by after the aggregation", `sum(rate(a_total[1m])) by (le) / 1e3`, []string{`a_total{}`}},
		{"a set operator with on", `sum by (profile, rule) (increase(a_total{job="x"}[10m])) > 0
and on (profile)
sum by (profile) (b{job="x", plugin="P"}) > 0`,
			[]string{`a_total{job="x"}`, `b{job="x",plugin="P"}`}},
		{"offset, bool and group_left", `a offset 5m > bool 1 * on (x) group_left (y) c`, []string{`a{}`, `c{}`}},
		{"a name in braces", `{__name__="a", b!="c,d"}`, []string{`a{b!="c,d"}`}},
		{"quotes and commas in values", `a{b="x\"y", c='p,q', d=~"e|f"}`, []string{`a{b="x\"y",c="p,q",d=~"e|f"}`}},
		{"Grafana label_values", `label_values(scheduler_schedule_attempts_total{job=~"$job"}, profile)`,
			[]string{`scheduler_schedule_attempts_total{job=~"$job"}`}},
		{"a variable in braces and the old syntax", `rate(a[${__range}]) + b[[interval]]`, []string{`a{}`, `b{}`}},
		{"a name regex", `label_values({__name__=~"a_.*|b_.*"}, job)`, []string{`{__name__=~"a_.*|b_.*"}`}},
		{"topk with a number", `topk(5, max by (state) (m{s="open"}))`, []string{`m{s="open"}`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sels, err := selectors(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range sels {
				got = append(got, s.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("selectors(%q) (-want, +got):\n%s", tt.expr, diff)
			}
		})
	}
	for _, bad := range []string{`a{b="c"`, `rate(a[5m]`, `a{b}`, `a{b="c}`} {
		if sels, err := selectors(bad); err == nil {
			t.Errorf("selectors(%q) = %v, want an error", bad, sels)
		}
	}
}

// TestDashboardDeadQueryReported feeds the series check a scrape in which a
// metric and a label were renamed, and expects each query that uses them
// reported, and nothing else: the check can fail.
func TestDashboardDeadQueryReported(t *testing.T) {
	s := scrape{
		"placementpolicy_unschedulable_attempts_total": {{labels: map[string]string{"profile": "p", "rule": "r"}}}, // renamed from placementpolicy_unschedulable_total
		"scheduler_unschedulable_pods":                 {{labels: map[string]string{"profile": "p", "plugin": "PlacementPolicy"}}},
		"maintenancewindow_nodes":                      {{labels: map[string]string{"profile": "p", "window_state": "open"}}}, // label renamed from state
		"x_bucket":                                     {{labels: map[string]string{"le": "1"}}},
	}
	qs := []query{
		{"alert held", `sum by (profile, rule) (increase(placementpolicy_unschedulable_total{job="j"}[10m])) > 0 and on (profile) scheduler_unschedulable_pods{plugin="PlacementPolicy"} > 0`},
		{"panel nodes", `max by (state) (maintenancewindow_nodes{profile=~"$profile", state="open"})`},
		{"panel plugin", `scheduler_unschedulable_pods{plugin="MaintenanceWindow"}`},
		{"variable found", `label_values({__name__=~"placementpolicy_.*|maintenancewindow_.*"}, job)`},
		{"variable lost", `label_values({__name__=~"maintenancewindow_.*", profile="q"}, job)`},
		{"panel fine", `histogram_quantile(0.99, sum by (le) (rate(x_bucket[5m]))) + scheduler_unschedulable_pods{plugin=~"Placement.*"}`},
	}
	got, err := s.deadQueries(qs)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"alert held: no metric placementpolicy_unschedulable_total",
		"panel nodes: no series of maintenancewindow_nodes has the label state",
		`panel plugin: no series of scheduler_unschedulable_pods matches scheduler_unschedulable_pods{plugin="MaintenanceWindow"}`,
		`variable lost: no series matches {__name__=~"maintenancewindow_.*",profile="q"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("dead queries (-want, +got):\n%s", diff)
	}
}

// TestDashboardDefinedQueries: the OnDemandShare queries are taken out of
// the scrape check and a metric their source does not define is reported;
// the dashboard's own OnDemandShare queries all select defined metrics.
func TestDashboardDefinedQueries(t *testing.T) {
	qs := []query{
		{"panel fine", `max(ondemandshare_workload_on_demand_replicas{job=~"$job"})`},
		{"panel renamed", `sum(rate(ondemandshare_decided_total{job=~"$job"}[5m]))`},
		{"panel scheduler", `scheduler_pending_pods{job=~"$job"}`},
	}
	rest, undefined, err := definedQueries(qs, "ondemandshare_", onDemandShareMetrics(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(rest) != 1 || rest[0].source != "panel scheduler" {
		t.Errorf("left for the scrape: %v, want panel scheduler alone", rest)
	}
	if diff := cmp.Diff([]string{"panel renamed: ondemandshare_decided_total is not defined"}, undefined); diff != "" {
		t.Errorf("undefined (-want, +got):\n%s", diff)
	}
	rest, undefined, err = definedQueries(dashboardQueries(t, readDashboard(t)), "ondemandshare_", onDemandShareMetrics(t))
	if err != nil || len(undefined) > 0 {
		t.Errorf("the dashboard's OnDemandShare queries: %v %v", err, undefined)
	}
	if taken := len(dashboardQueries(t, readDashboard(t))) - len(rest); taken != 4 {
		t.Errorf("%d dashboard queries select OnDemandShare metrics, want 4 (the OnDemandShare row)", taken)
	}
	rest, undefined, err = definedQueries(dashboardQueries(t, readDashboard(t)), "nodepoolquota_", nodePoolQuotaMetrics(t))
	if err != nil || len(undefined) > 0 {
		t.Errorf("the dashboard's NodePoolQuota queries: %v %v", err, undefined)
	}
	if taken := len(dashboardQueries(t, readDashboard(t))) - len(rest); taken != 5 {
		t.Errorf("%d dashboard queries select NodePoolQuota metrics, want 5 (the team quotas row)", taken)
	}
}

// TestDashboardMaintenanceSources: maintenancewindow_nodes counts a node
// once per source that puts it in a state, so the dashboard has a panel of
// it by state and source, and every other query of it, panel or alert,
// sums the source away before anything else (a query left as before would
// take the max over sources, not the nodes in a state).
func TestDashboardMaintenanceSources(t *testing.T) {
	qs := append(dashboardQueries(t, readDashboard(t)), ruleQueries(t, renderChart(t, "adminsched-system", monitoringOn...))...)
	bySource := regexp.MustCompile(`^max by \(state, source\) \(maintenancewindow_nodes\{[^}]*\}\)$`)
	summedAway := regexp.MustCompile(`sum without \(source\) \(maintenancewindow_nodes\{[^}]*\}\)`)
	panel := false
	for _, q := range qs {
		if !strings.Contains(q.expr, "maintenancewindow_nodes") {
			continue
		}
		if q.source == "panel Nodes in maintenance by state and source" {
			panel = true
			if !bySource.MatchString(q.expr) {
				t.Errorf("%s: %s, want max by (state, source) of maintenancewindow_nodes", q.source, q.expr)
			}
			continue
		}
		if strings.Count(q.expr, "maintenancewindow_nodes{") != len(summedAway.FindAllString(q.expr, -1)) {
			t.Errorf("%s: %s: every maintenancewindow_nodes must be summed without (source) first", q.source, q.expr)
		}
	}
	if !panel {
		t.Error(`no panel "Nodes in maintenance by state and source" queries maintenancewindow_nodes`)
	}
}

// TestDashboardFile checks the dashboard's shape: valid JSON with a current
// schemaVersion, the datasource, job and profile variables, every panel on
// the datasource variable, unique panel ids, and the profile variable in
// every query of a metric that has a profile label.
func TestDashboardFile(t *testing.T) {
	var d struct {
		UID           string `json:"uid"`
		Title         string `json:"title"`
		SchemaVersion int    `json:"schemaVersion"`
		Templating    struct {
			List []struct {
				Name, Type string
			} `json:"list"`
		} `json:"templating"`
		Panels []struct {
			ID         int    `json:"id"`
			Type       string `json:"type"`
			Title      string `json:"title"`
			Datasource *struct {
				UID string `json:"uid"`
			} `json:"datasource"`
			Targets []struct {
				Expr       string `json:"expr"`
				Datasource *struct {
					UID string `json:"uid"`
				} `json:"datasource"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(readDashboard(t), &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	// Dashboards saved by Grafana 11 and 12 carry 39 to 41.
	if d.SchemaVersion < 39 {
		t.Errorf("schemaVersion %d, want that of a current Grafana (>= 39)", d.SchemaVersion)
	}
	if d.UID == "" || d.Title == "" {
		t.Errorf("uid %q, title %q: want both", d.UID, d.Title)
	}
	var vars []string
	for _, v := range d.Templating.List {
		vars = append(vars, v.Name+":"+v.Type)
	}
	if diff := cmp.Diff([]string{"datasource:datasource", "job:query", "profile:query"}, vars); diff != "" {
		t.Errorf("template variables (-want, +got):\n%s", diff)
	}
	ids := map[int]string{}
	var queries int
	for _, p := range d.Panels {
		if other, dup := ids[p.ID]; dup {
			t.Errorf("panels %q and %q share the id %d", other, p.Title, p.ID)
		}
		ids[p.ID] = p.Title
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q: datasource %+v, want uid ${datasource}", p.Title, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no targets", p.Title)
		}
		for _, tg := range p.Targets {
			queries++
			if tg.Datasource == nil || tg.Datasource.UID != "${datasource}" {
				t.Errorf("panel %q: a target's datasource %+v, want uid ${datasource}", p.Title, tg.Datasource)
			}
			if !strings.Contains(tg.Expr, `job=~"$job"`) {
				t.Errorf("panel %q: %s does not select job=~\"$job\": it would mix in the default scheduler's series", p.Title, tg.Expr)
			}
		}
	}
	if queries == 0 {
		t.Fatal("the dashboard has no queries")
	}
}

// TestDashboardChart renders the chart: by default without the dashboard
// ConfigMap and the PrometheusRule, with them when enabled (the ConfigMap
// holding the dashboard file as it is, with the sidecar's label; every
// alert with expr, for, labels.severity, annotations.summary and a runbook
// of doc/monitoring.md); values reach the alerts; helm lint --strict passes;
// bad monitoring values fail naming the field.
func TestDashboardChart(t *testing.T) {
	const ns = "adminsched-system"
	kinds := func(objs []*unstructured.Unstructured) (dashboards, rules []*unstructured.Unstructured) {
		for _, o := range objs {
			switch {
			case o.GetKind() == "PrometheusRule":
				rules = append(rules, o)
			case o.GetKind() == "ConfigMap" && strings.HasSuffix(o.GetName(), "-dashboard"):
				dashboards = append(dashboards, o)
			}
		}
		return dashboards, rules
	}
	t.Run("off by default", func(t *testing.T) {
		for _, args := range [][]string{nil, {"--set", "serviceMonitor.enabled=true"}} {
			if d, r := kinds(renderChart(t, ns, args...)); len(d)+len(r) > 0 {
				t.Errorf("helm template %v rendered %d dashboard ConfigMaps and %d PrometheusRules, want none", args, len(d), len(r))
			}
		}
	})
	t.Run("each on its own", func(t *testing.T) {
		d, r := kinds(renderChart(t, ns, "--set", "monitoring.dashboard.enabled=true"))
		if len(d) != 1 || len(r) != 0 {
			t.Errorf("monitoring.dashboard.enabled=true: %d dashboards, %d rules, want 1 and 0", len(d), len(r))
		}
		d, r = kinds(renderChart(t, ns, "--set", "monitoring.prometheusRule.enabled=true"))
		if len(d) != 0 || len(r) != 1 {
			t.Errorf("monitoring.prometheusRule.enabled=true: %d dashboards, %d rules, want 0 and 1", len(d), len(r))
		}
	})
	t.Run("dashboard ConfigMap", func(t *testing.T) {
		d, _ := kinds(renderChart(t, ns, append(monitoringOn, "--set", "monitoring.dashboard.namespace=grafana",
			"--set", "monitoring.dashboard.annotations.grafana_folder=Scheduling")...))
		if len(d) != 1 {
			t.Fatalf("%d dashboard ConfigMaps, want 1", len(d))
		}
		cm := d[0]
		if cm.GetNamespace() != "grafana" || cm.GetLabels()["grafana_dashboard"] != "1" || cm.GetAnnotations()["grafana_folder"] != "Scheduling" {
			t.Errorf("the dashboard ConfigMap is in %q with labels %v, annotations %v; want grafana, grafana_dashboard=1, grafana_folder=Scheduling",
				cm.GetNamespace(), cm.GetLabels(), cm.GetAnnotations())
		}
		data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
		if len(data) != 1 {
			t.Fatalf("the dashboard ConfigMap holds %d keys, want 1", len(data))
		}
		got := data["adminsched-scheduler.json"]
		var v any
		if err := json.Unmarshal([]byte(got), &v); err != nil {
			t.Fatalf("the ConfigMap's adminsched-scheduler.json is not JSON: %v", err)
		}
		if diff := cmp.Diff(strings.TrimSpace(string(readDashboard(t))), got); diff != "" {
			t.Errorf("the ConfigMap's dashboard differs from %s (-file, +ConfigMap):\n%s", dashboardFile, diff)
		}
	})
	// checkRule checks the one PrometheusRule of r and its alerts: each
	// with every field, a runbook of doc/monitoring.md and the job of the
	// ServiceMonitor that scrapes its metrics (the license driver's for
	// its alerts, whose metrics must be the driver's).
	checkRule := func(t *testing.T, r []*unstructured.Unstructured, want []string) {
		t.Helper()
		if len(r) != 1 {
			t.Fatalf("%d PrometheusRules, want 1", len(r))
		}
		rule := r[0]
		if rule.GetAPIVersion() != "monitoring.coreos.com/v1" || rule.GetNamespace() != ns || rule.GetLabels()["release"] != "prometheus" {
			t.Errorf("PrometheusRule %s in %q, labels %v: want monitoring.coreos.com/v1 in %s with release=prometheus", rule.GetAPIVersion(), rule.GetNamespace(), rule.GetLabels(), ns)
		}
		doc := readMonitoringDoc(t)
		driverMetrics := licenseDriverMetrics(t)
		odsMetrics := onDemandShareMetrics(t)
		npqMetrics := nodePoolQuotaMetrics(t)
		var names []string
		for _, a := range ruleAlerts(rule) {
			name, _ := a["alert"].(string)
			names = append(names, name)
			for _, field := range [][]string{{"expr"}, {"for"}, {"labels", "severity"}, {"annotations", "summary"}, {"annotations", "description"}, {"annotations", "runbook_url"}} {
				if v, _, _ := unstructured.NestedString(a, field...); strings.TrimSpace(v) == "" {
					t.Errorf("alert %q has no %s", name, strings.Join(field, "."))
				}
			}
			expr, _ := a["expr"].(string)
			sels, err := selectors(expr)
			if err != nil {
				t.Errorf("alert %q: %v", name, err)
			}
			job := `job="adminsched-scheduler-metrics"`
			if slices.Contains(licenseDriverAlerts, name) {
				job = `job="adminsched-scheduler-license-driver-metrics"`
				for _, sel := range sels {
					if !slices.Contains(driverMetrics, sel.metric) {
						t.Errorf("alert %q: %s is not a metric of %s %v", name, sel.metric, licenseDriverMetricsFile, driverMetrics)
					}
				}
			}
			if slices.Contains(onDemandShareAlerts, name) {
				job = `job="adminsched-scheduler-ondemandshare-controller-metrics"`
				for _, sel := range sels {
					if !slices.Contains(odsMetrics, sel.metric) {
						t.Errorf("alert %q: %s is not a metric of %v %v", name, sel.metric, onDemandShareMetricsFiles, odsMetrics)
					}
				}
			}
			if slices.Contains(nodePoolQuotaAlerts, name) {
				job = `job="adminsched-scheduler-nodepoolquota-controller-metrics"`
				for _, sel := range sels {
					if !slices.Contains(npqMetrics, sel.metric) {
						t.Errorf("alert %q: %s is not a metric of %v %v", name, sel.metric, nodePoolQuotaMetricsFiles, npqMetrics)
					}
				}
			}
			if len(sels) == 0 {
				t.Errorf("alert %q: no metric in %s", name, expr)
			}
			for _, sel := range sels {
				if !strings.Contains(sel.String(), job) {
					t.Errorf("alert %q: %s does not select the ServiceMonitor's %s", name, sel, job)
				}
			}
			url, _, _ := unstructured.NestedString(a, "annotations", "runbook_url")
			anchor, _ := strings.CutPrefix(url, "https://github.com/adminsched/scheduler-plugins/blob/main/doc/monitoring.md#")
			if anchor == url || !strings.Contains(doc, "\n### "+anchorTitle(anchor)) {
				t.Errorf("alert %q: runbook_url %s has no section of doc/monitoring.md", name, url)
			}
		}
		if diff := cmp.Diff(want, names); diff != "" {
			t.Errorf("alerts (-want, +got):\n%s", diff)
		}
	}
	schedulerAlerts := []string{"PlacementPolicyHoldingPods", "MaintenanceRetriesPilingUp", "PodsUnschedulableByPlugin", "SchedulingErrors"}
	t.Run("PrometheusRule", func(t *testing.T) {
		_, r := kinds(renderChart(t, ns, append(monitoringOn, "--set", "monitoring.prometheusRule.labels.release=prometheus")...))
		checkRule(t, r, schedulerAlerts)
	})
	// The license driver's alerts render with the driver, after the
	// scheduler's, and only with the PrometheusRule.
	t.Run("license driver alerts", func(t *testing.T) {
		_, r := kinds(renderChart(t, ns, append(monitoringOn, "--set", "monitoring.prometheusRule.labels.release=prometheus",
			"--set", "licenseDriver.enabled=true")...))
		checkRule(t, r, append(slices.Clone(schedulerAlerts), licenseDriverAlerts...))
		if _, r := kinds(renderChart(t, ns, "--set", "licenseDriver.enabled=true", "--set", "serviceMonitor.enabled=true")); len(r) != 0 {
			t.Errorf("licenseDriver.enabled without monitoring.prometheusRule.enabled: %d PrometheusRules, want none", len(r))
		}
		// The default job is the name of the license driver's metrics
		// Service, which the ServiceMonitor makes the job label.
		var service bool
		for _, o := range renderChart(t, ns, "--set", "licenseDriver.enabled=true", "--set", "serviceMonitor.enabled=true") {
			service = service || o.GetKind() == "Service" && o.GetName() == "adminsched-scheduler-license-driver-metrics"
		}
		if !service {
			t.Error("no Service adminsched-scheduler-license-driver-metrics, the license driver alerts' default job")
		}
	})
	// The OnDemandShare alert renders with the controller, last, and only
	// with the PrometheusRule; its default job is the controller's metrics
	// Service.
	t.Run("ondemandshare alert", func(t *testing.T) {
		_, r := kinds(renderChart(t, ns, append(monitoringOn, "--set", "monitoring.prometheusRule.labels.release=prometheus",
			"--set", "onDemandShare.controller.enabled=true")...))
		checkRule(t, r, append(slices.Clone(schedulerAlerts), onDemandShareAlerts...))
		objs := renderChart(t, ns, "--set", "onDemandShare.controller.enabled=true", "--set", "serviceMonitor.enabled=true")
		if _, r := kinds(objs); len(r) != 0 {
			t.Errorf("onDemandShare.controller.enabled without monitoring.prometheusRule.enabled: %d PrometheusRules, want none", len(r))
		}
		var service bool
		for _, o := range objs {
			service = service || o.GetKind() == "Service" && o.GetName() == "adminsched-scheduler-ondemandshare-controller-metrics"
		}
		if !service {
			t.Error("no Service adminsched-scheduler-ondemandshare-controller-metrics, the OnDemandShare alert's default job")
		}
		_, r = kinds(renderChart(t, ns, append(monitoringOn, "--set", "onDemandShare.controller.enabled=true",
			"--set", `monitoring.prometheusRule.onDemandShare.jobSelector=job="ods"`,
			"--set", "monitoring.prometheusRule.onDemandShare.belowMinimum.for=15m",
			"--set", "monitoring.prometheusRule.onDemandShare.belowMinimum.severity=critical")...))
		var got []string
		for _, a := range ruleAlerts(r[0]) {
			if slices.Contains(onDemandShareAlerts, a["alert"].(string)) {
				sev, _, _ := unstructured.NestedString(a, "labels", "severity")
				got = append(got, fmt.Sprintf("%s for %s %s: %s", a["alert"], a["for"], sev, a["expr"]))
			}
		}
		want := []string{`OnDemandShareBelowMinimum for 15m critical: max by (policy, namespace, workload) (ondemandshare_workload_on_demand_replicas{job="ods"})
< max by (policy, namespace, workload) (ondemandshare_workload_required_on_demand_replicas{job="ods"})`}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("alerts (-want, +got):\n%s", diff)
		}
		_, r = kinds(renderChart(t, ns, append(monitoringOn, "--set", "onDemandShare.controller.enabled=true",
			"--set", "monitoring.prometheusRule.labels.release=prometheus", "--set", "monitoring.prometheusRule.onDemandShare.belowMinimum.enabled=false")...))
		checkRule(t, r, schedulerAlerts)
	})
	// The NodePoolQuota alert renders with the controller, last, and only
	// with the PrometheusRule; its default job is the controller's metrics
	// Service, which its ServiceMonitor scrapes; its description names the
	// pool and the team.
	t.Run("nodepoolquota alert", func(t *testing.T) {
		_, r := kinds(renderChart(t, ns, append(monitoringOn, "--set", "monitoring.prometheusRule.labels.release=prometheus",
			"--set", "nodePoolQuota.controller.enabled=true", "--set", "onDemandShare.controller.enabled=true")...))
		checkRule(t, r, slices.Concat(schedulerAlerts, onDemandShareAlerts, nodePoolQuotaAlerts))
		for _, a := range ruleAlerts(r[0]) {
			if a["alert"] != "NodePoolQuotaTeamHeld" {
				continue
			}
			desc, _, _ := unstructured.NestedString(a, "annotations", "description")
			for _, want := range []string{"{{ $labels.pool }}", "{{ $labels.team }}"} {
				if !strings.Contains(desc, want) {
					t.Errorf("NodePoolQuotaTeamHeld's description does not name %s: %s", want, desc)
				}
			}
		}
		objs := renderChart(t, ns, "--set", "nodePoolQuota.controller.enabled=true", "--set", "serviceMonitor.enabled=true")
		if _, r := kinds(objs); len(r) != 0 {
			t.Errorf("nodePoolQuota.controller.enabled without monitoring.prometheusRule.enabled: %d PrometheusRules, want none", len(r))
		}
		var service, monitor bool
		for _, o := range objs {
			service = service || o.GetKind() == "Service" && o.GetName() == "adminsched-scheduler-nodepoolquota-controller-metrics"
			monitor = monitor || o.GetKind() == "ServiceMonitor" && o.GetName() == "adminsched-scheduler-nodepoolquota-controller"
		}
		if !service || !monitor {
			t.Errorf("Service adminsched-scheduler-nodepoolquota-controller-metrics (%v) and its ServiceMonitor (%v), the alert's default job: want both", service, monitor)
		}
		_, r = kinds(renderChart(t, ns, append(monitoringOn, "--set", "nodePoolQuota.controller.enabled=true",
			"--set", `monitoring.prometheusRule.nodePoolQuota.jobSelector=job="npq"`,
			"--set", "monitoring.prometheusRule.nodePoolQuota.teamHeld.for=1h",
			"--set", "monitoring.prometheusRule.nodePoolQuota.teamHeld.severity=info")...))
		var got []string
		for _, a := range ruleAlerts(r[0]) {
			if slices.Contains(nodePoolQuotaAlerts, a["alert"].(string)) {
				sev, _, _ := unstructured.NestedString(a, "labels", "severity")
				got = append(got, fmt.Sprintf("%s for %s %s: %s", a["alert"], a["for"], sev, a["expr"]))
			}
		}
		want := []string{`NodePoolQuotaTeamHeld for 1h info: max by (pool, team) (nodepoolquota_held_pods{job="npq"}) > 0`}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("alerts (-want, +got):\n%s", diff)
		}
		_, r = kinds(renderChart(t, ns, append(monitoringOn, "--set", "nodePoolQuota.controller.enabled=true",
			"--set", "monitoring.prometheusRule.labels.release=prometheus", "--set", "monitoring.prometheusRule.nodePoolQuota.teamHeld.enabled=false")...))
		checkRule(t, r, schedulerAlerts)
	})
	t.Run("values reach the alerts", func(t *testing.T) {
		_, r := kinds(renderChart(t, ns, append(monitoringOn,
			"--set", "monitoring.prometheusRule.placementPolicyHoldingPods.for=5m",
			"--set", "monitoring.prometheusRule.placementPolicyHoldingPods.severity=critical",
			"--set", "monitoring.prometheusRule.maintenanceRetriesPiling.threshold=7",
			"--set", "monitoring.prometheusRule.schedulingErrors.enabled=false",
			"--set", `monitoring.prometheusRule.jobSelector=job="sched"`,
			"--set", "licenseDriver.enabled=true",
			"--set", `monitoring.prometheusRule.licenseDriver.jobSelector=job="lic"`,
			"--set", "monitoring.prometheusRule.licenseDriver.seatHeldTwice.for=30s",
			"--set", "monitoring.prometheusRule.licenseDriver.featureOverLimit.severity=critical",
			"--set", "monitoring.prometheusRule.licenseDriver.sourceStale.enabled=false")...))
		if len(r) != 1 {
			t.Fatalf("%d PrometheusRules, want 1", len(r))
		}
		var got []string
		for _, a := range ruleAlerts(r[0]) {
			sev, _, _ := unstructured.NestedString(a, "labels", "severity")
			got = append(got, fmt.Sprintf("%s for %s %s: %s", a["alert"], a["for"], sev, a["expr"]))
		}
		want := []string{
			`PlacementPolicyHoldingPods for 5m critical: sum by (profile, rule) (increase(placementpolicy_unschedulable_total{job="sched"}[10m])) > 0
and on (profile)
sum by (profile) (scheduler_unschedulable_pods{job="sched", plugin="PlacementPolicy"}) > 0`,
			`MaintenanceRetriesPilingUp for 30m warning: sum by (profile) (maintenancewindow_pending_retries{job="sched"}) > 7`,
			`PodsUnschedulableByPlugin for 1h warning: sum by (profile, plugin) (scheduler_unschedulable_pods{job="sched", plugin=~"PlacementPolicy|MaintenanceWindow"}) > 0`,
			`LicenseSeatHeldTwice for 30s critical: max by (pool) (license_driver_devices_held_twice{job="lic"}) > 0`,
			`LicenseFeatureOverLimit for 5m critical: max by (pool) (license_driver_feature_over_limit{job="lic"}) == 1`,
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("alerts (-want, +got):\n%s", diff)
		}
	})
	t.Run("helm lint", func(t *testing.T) {
		for _, args := range [][]string{monitoringOn, append(slices.Clone(monitoringOn), "--set", "licenseDriver.enabled=true"),
			append(slices.Clone(monitoringOn), "--set", "onDemandShare.controller.enabled=true"),
			append(slices.Clone(monitoringOn), "--set", "nodePoolQuota.controller.enabled=true")} {
			if out, err := runHelm(t, append([]string{"lint", "--strict", chartDir}, args...)...); err != nil {
				t.Errorf("helm lint --strict %v: %v\n%s", args, err, out)
			}
		}
	})
	t.Run("bad values", func(t *testing.T) {
		for _, tt := range []struct {
			args []string
			want string
		}{
			{[]string{"--set", "monitoring.prometheusRule.placementPolicyHoldingPods.for=15 minutes"}, "/monitoring/prometheusRule/placementPolicyHoldingPods/for"},
			{[]string{"--set", "monitoring.prometheusRule.maintenanceRetriesPiling.threshold=-1"}, "/monitoring/prometheusRule/maintenanceRetriesPiling/threshold"},
			{[]string{"--set-string", "monitoring.prometheusRule.unschedulableByPlugin.threshold=many"}, "/monitoring/prometheusRule/unschedulableByPlugin/threshold"},
			{[]string{"--set", "monitoring.prometheusRule.schedulingErrors.severity="}, "/monitoring/prometheusRule/schedulingErrors/severity"},
			{[]string{"--set", "monitoring.prometheusRule.licenseDriver.seatHeldTwice.for=1 minute"}, "/monitoring/prometheusRule/licenseDriver/seatHeldTwice/for"},
			{[]string{"--set", "monitoring.prometheusRule.licenseDriver.sourceStale.severity="}, "/monitoring/prometheusRule/licenseDriver/sourceStale/severity"},
			{[]string{"--set", "monitoring.prometheusRule.licenseDriver.heldTwice.enabled=true"}, "heldTwice"},
			{[]string{"--set", "monitoring.prometheusRule.onDemandShare.belowMinimum.for=5 minutes"}, "/monitoring/prometheusRule/onDemandShare/belowMinimum/for"},
			{[]string{"--set", "monitoring.prometheusRule.onDemandShare.belowMinimum.severity="}, "/monitoring/prometheusRule/onDemandShare/belowMinimum/severity"},
			{[]string{"--set", "monitoring.prometheusRule.nodePoolQuota.teamHeld.for=15 minutes"}, "/monitoring/prometheusRule/nodePoolQuota/teamHeld/for"},
			{[]string{"--set", "monitoring.prometheusRule.nodePoolQuota.teamHeld.severity="}, "/monitoring/prometheusRule/nodePoolQuota/teamHeld/severity"},
			{[]string{"--set", "monitoring.dashboard.enable=true"}, "enable"},
			{[]string{"--set", "monitoring.dashboard.namespace=Grafana"}, "/monitoring/dashboard/namespace"},
		} {
			out, err := helmTemplate(t, ns, append(monitoringOn, tt.args...)...)
			if err == nil {
				t.Errorf("helm template %v rendered:\n%.300s", tt.args, out)
				continue
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("helm template %v failed without naming %q: %v", tt.args, tt.want, err)
			}
		}
	})
}

// anchorTitle returns the heading text GitHub makes anchor from, for the
// runbook headings of doc/monitoring.md, which are the alert names.
func anchorTitle(anchor string) string {
	for _, name := range append([]string{"PlacementPolicyHoldingPods", "MaintenanceRetriesPilingUp", "PodsUnschedulableByPlugin", "SchedulingErrors"}, slices.Concat(licenseDriverAlerts, onDemandShareAlerts, nodePoolQuotaAlerts)...) {
		if strings.ToLower(name) == anchor {
			return name
		}
	}
	return "\x00" + anchor // matches no heading
}
