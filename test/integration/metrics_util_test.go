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
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/component-base/metrics/testutil"
)

// dashboardFile is the Grafana dashboard the chart ships.
var dashboardFile = filepath.Join(chartDir, "dashboards", "adminsched-scheduler.json")

// scrape is one GET /metrics, parsed: the samples of each series name as
// PromQL sees them (a histogram as <name>_bucket, _sum and _count).
type scrape map[string][]sample

type sample struct {
	labels map[string]string
	value  float64
}

// value returns the value of name{labels}, labels given in full; ok is
// false when the scrape has no such series.
func (s scrape) value(name string, labels map[string]string) (float64, bool) {
	for _, x := range s[name] {
		if maps.Equal(x.labels, labels) {
			return x.value, true
		}
	}
	return 0, false
}

// scrapeMetrics GETs /metrics on the secure port with a bearer token and
// parses it. Unlike getMetrics (chart_test.go), it keeps the body.
func scrapeMetrics(ctx context.Context, port int, token string) (scrape, string, error) {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the scheduler's self-signed serving cert
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/metrics", port), nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, "", err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("GET /metrics: %s: %s", resp.Status, body)
	}
	parsed := testutil.NewMetrics()
	if err := testutil.ParseMetrics(string(body), &parsed); err != nil {
		return nil, "", err
	}
	s := scrape{}
	for name, samples := range parsed {
		for _, x := range samples {
			labels := map[string]string{}
			for k, v := range x.Metric {
				if k != testutil.MetricNameLabel {
					labels[string(k)] = string(v)
				}
			}
			s[name] = append(s[name], sample{labels: labels, value: float64(x.Value)})
		}
	}
	return s, string(body), nil
}

// selector is a PromQL vector selector: a metric name and label matchers.
type selector struct {
	metric   string
	matchers []matcher
}

type matcher struct {
	label, op, value string
}

func (s selector) String() string {
	var m []string
	for _, x := range s.matchers {
		m = append(m, fmt.Sprintf("%s%s%q", x.label, x.op, x.value))
	}
	return s.metric + "{" + strings.Join(m, ",") + "}"
}

// promqlWords are PromQL words that are not metric names when they stand
// without a parenthesis after them: aggregation operators (sum by (x)
// (...)), binary and set operators and modifiers.
var promqlWords = map[string]bool{
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
	"limitk": true, "limit_ratio": true,
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"and": true, "or": true, "unless": true, "bool": true, "offset": true, "atan2": true,
	"inf": true, "nan": true,
}

// labelListWords are followed by a parenthesized list of label names.
var labelListWords = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}

// selectors returns the vector selectors of a PromQL expression, in order.
// It is a tokenizer, not a parser: it skips strings, numbers, durations and
// range selectors ([5m]), template variables ($x, ${x}, [[x]]), functions
// (a name followed by a parenthesis), operators and the label lists of by,
// without, on, ignoring, group_left and group_right, and reads each other
// name with the matchers in the braces after it. Grafana's
// label_values(selector, label) keeps only its selector.
func selectors(expr string) ([]selector, error) {
	var out []selector
	isStart := func(c byte) bool { return c == '_' || c == ':' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
	isPart := func(c byte) bool { return isStart(c) || (c >= '0' && c <= '9') }
	skipSpace := func(i int) int {
		for i < len(expr) && strings.ContainsRune(" \t\r\n", rune(expr[i])) {
			i++
		}
		return i
	}
	// stringEnd returns the index after the string that starts at i.
	stringEnd := func(i int) (int, error) {
		for j := i + 1; j < len(expr); j++ {
			switch {
			case expr[j] == '\\' && expr[i] != '`':
				j++
			case expr[j] == expr[i]:
				return j + 1, nil
			}
		}
		return 0, fmt.Errorf("unterminated string at %d in %q", i, expr)
	}
	// closing returns the index after the bracket that closes the one at i.
	closing := func(i int, open, close byte) (int, error) {
		depth := 0
		for j := i; j < len(expr); j++ {
			switch expr[j] {
			case '"', '\'', '`':
				end, err := stringEnd(j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case open:
				depth++
			case close:
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, fmt.Errorf("unbalanced %c at %d in %q", open, i, expr)
	}
	labelValuesArg := -1 // the index of the second argument of label_values, skipped
	parens := 0          // open parentheses of functions and groups
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case strings.ContainsRune(" \t\r\n", rune(c)):
			i++
		case c == '"' || c == '\'' || c == '`':
			end, err := stringEnd(i)
			if err != nil {
				return nil, err
			}
			i = end
		case c == '(':
			parens++
			i++
		case c == ')':
			if parens--; parens < 0 {
				return nil, fmt.Errorf("unbalanced ) at %d in %q", i, expr)
			}
			i++
		case c == '$':
			// $var, ${var} or ${var:format}.
			i++
			if i < len(expr) && expr[i] == '{' {
				end := strings.IndexByte(expr[i:], '}')
				if end < 0 {
					return nil, fmt.Errorf("unterminated ${ at %d in %q", i, expr)
				}
				i += end + 1
			}
			for i < len(expr) && isPart(expr[i]) {
				i++
			}
		case c == '[':
			// A range or subquery duration, or Grafana's old [[var]].
			end, err := closing(i, '[', ']')
			if err != nil {
				return nil, err
			}
			i = end
		case c >= '0' && c <= '9' || (c == '.' && i+1 < len(expr) && expr[i+1] >= '0' && expr[i+1] <= '9'):
			// A number or a duration (5m, 1e3, 0x1f, 1.5).
			for i < len(expr) && (isPart(expr[i]) || expr[i] == '.') {
				i++
			}
		case c == '{':
			// A selector without a name before its braces.
			end, err := closing(i, '{', '}')
			if err != nil {
				return nil, err
			}
			ms, err := parseMatchers(expr[i+1 : end-1])
			if err != nil {
				return nil, fmt.Errorf("%w in %q", err, expr)
			}
			s := selector{}
			for _, m := range ms {
				if m.label == "__name__" && m.op == "=" {
					s.metric = m.value
				} else {
					s.matchers = append(s.matchers, m)
				}
			}
			if s.metric == "" && !slices.ContainsFunc(s.matchers, func(m matcher) bool { return m.label == "__name__" && m.op == "=~" }) {
				return nil, fmt.Errorf("a selector without a metric name in %q", expr)
			}
			out = append(out, s)
			i = end
		case isStart(c):
			start := i
			for i < len(expr) && isPart(expr[i]) {
				i++
			}
			word := expr[start:i]
			next := skipSpace(i)
			switch {
			case labelListWords[word] && next < len(expr) && expr[next] == '(':
				end, err := closing(next, '(', ')')
				if err != nil {
					return nil, err
				}
				i = end
			case next < len(expr) && expr[next] == '(':
				// A function or an aggregation: its arguments are read next.
				if word == "label_values" {
					end, err := closing(next, '(', ')')
					if err != nil {
						return nil, err
					}
					if comma := strings.LastIndexByte(expr[next:end], ','); comma >= 0 {
						labelValuesArg = next + comma
					}
				}
				i = next + 1
				parens++
			case promqlWords[strings.ToLower(word)]:
			case labelValuesArg >= 0 && start > labelValuesArg:
				// The label of label_values(selector, label).
				labelValuesArg = -1
			default:
				s := selector{metric: word}
				if next < len(expr) && expr[next] == '{' {
					end, err := closing(next, '{', '}')
					if err != nil {
						return nil, err
					}
					ms, err := parseMatchers(expr[next+1 : end-1])
					if err != nil {
						return nil, fmt.Errorf("%w in %q", err, expr)
					}
					s.matchers = ms
					i = end
				}
				out = append(out, s)
			}
		default:
			// Operators and commas.
			i++
		}
	}
	if parens != 0 {
		return nil, fmt.Errorf("unbalanced ( in %q", expr)
	}
	return out, nil
}

var matcherRE = regexp.MustCompile(`^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`" + `)\s*$`)

// parseMatchers parses the inside of a selector's braces.
func parseMatchers(s string) ([]matcher, error) {
	var out []matcher
	for len(strings.TrimSpace(s)) > 0 {
		// Split at the first comma outside quotes.
		end, inQuote := len(s), byte(0)
		for j := 0; j < len(s); j++ {
			switch {
			case inQuote != 0 && s[j] == '\\':
				j++
			case inQuote != 0 && s[j] == inQuote:
				inQuote = 0
			case inQuote == 0 && (s[j] == '"' || s[j] == '\'' || s[j] == '`'):
				inQuote = s[j]
			case inQuote == 0 && s[j] == ',':
				end = j
			}
			if end == j {
				break
			}
		}
		part := s[:end]
		if end < len(s) {
			s = s[end+1:]
		} else {
			s = ""
		}
		if strings.TrimSpace(part) == "" {
			continue // a trailing comma
		}
		m := matcherRE.FindStringSubmatch(part)
		if m == nil {
			return nil, fmt.Errorf("label matcher %q: want label op \"value\"", strings.TrimSpace(part))
		}
		value := m[3][1 : len(m[3])-1]
		if m[3][0] != '`' {
			value = strings.NewReplacer(`\\`, `\`, `\"`, `"`, `\'`, `'`).Replace(value)
		}
		out = append(out, matcher{label: m[1], op: m[2], value: value})
	}
	return out, nil
}

// targetLabels are added by Prometheus at scrape time: /metrics does not
// carry them.
var targetLabels = map[string]bool{
	"job": true, "instance": true, "namespace": true, "pod": true, "service": true, "endpoint": true, "container": true,
}

// onlyOnFailure are label values that no healthy run makes, so that the
// series check cannot see them: it checks their label only.
var onlyOnFailure = map[[3]string]string{
	{"scheduler_schedule_attempts_total", "result", "error"}: "an internal error of the scheduler",
}

// missingSeries returns what of sel the scrape lacks: the metric, a label
// it matches on, or any series that its equality and regex matchers select
// together (a value with a template variable matches any). It returns ""
// when sel selects at least one series.
func (s scrape) missingSeries(sel selector) string {
	if sel.metric == "" {
		// {__name__=~"re", ...}: any metric whose name matches will do.
		var rest []matcher
		var names []string
		for _, m := range sel.matchers {
			if m.label == "__name__" {
				for name := range s {
					if matchesAll(map[string]string{"__name__": name}, []matcher{m}) {
						names = append(names, name)
					}
				}
			} else {
				rest = append(rest, m)
			}
		}
		for _, name := range names {
			if s.missingSeries(selector{metric: name, matchers: rest}) == "" {
				return ""
			}
		}
		return fmt.Sprintf("no series matches %v", sel)
	}
	series, ok := s[sel.metric]
	if !ok {
		return fmt.Sprintf("no metric %s", sel.metric)
	}
	var positive []matcher
	for _, m := range sel.matchers {
		if targetLabels[m.label] {
			continue
		}
		if !slices.ContainsFunc(series, func(x sample) bool { _, ok := x.labels[m.label]; return ok }) {
			return fmt.Sprintf("no series of %s has the label %s", sel.metric, m.label)
		}
		if (m.op == "=" || m.op == "=~") && !strings.Contains(m.value, "$") && onlyOnFailure[[3]string{sel.metric, m.label, m.value}] == "" {
			positive = append(positive, m)
		}
	}
	for _, x := range series {
		if matchesAll(x.labels, positive) {
			return ""
		}
	}
	return fmt.Sprintf("no series of %s matches %v", sel.metric, selector{metric: sel.metric, matchers: positive})
}

func matchesAll(labels map[string]string, ms []matcher) bool {
	for _, m := range ms {
		v := labels[m.label]
		switch m.op {
		case "=":
			if v != m.value {
				return false
			}
		case "=~":
			re, err := regexp.Compile("^(?:" + m.value + ")$")
			if err != nil || !re.MatchString(v) {
				return false
			}
		}
	}
	return true
}

// query is one PromQL expression of the dashboard or the alerts, with where
// it comes from.
type query struct {
	source, expr string
}

// dashboardQueries returns every PromQL expression of the dashboard: the
// panels' targets (rows' panels too) and the query variables.
func dashboardQueries(t testing.TB, data []byte) []query {
	t.Helper()
	type target struct {
		Expr string `json:"expr"`
	}
	type panel struct {
		Title   string   `json:"title"`
		Targets []target `json:"targets"`
		Panels  []panel  `json:"panels"`
	}
	var d struct {
		Panels     []panel `json:"panels"`
		Templating struct {
			List []struct {
				Name  string          `json:"name"`
				Type  string          `json:"type"`
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	var out []query
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, tg := range p.Targets {
				if strings.TrimSpace(tg.Expr) == "" {
					t.Errorf("%s: panel %q has a target without expr", dashboardFile, p.Title)
				}
				out = append(out, query{source: "panel " + p.Title, expr: tg.Expr})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		// A query is a string, or {query: ..., refId: ...} in newer Grafana.
		var q struct {
			Query string `json:"query"`
		}
		var s string
		if err := json.Unmarshal(v.Query, &s); err != nil {
			if err := json.Unmarshal(v.Query, &q); err != nil {
				t.Fatalf("%s: variable %s: query %s: %v", dashboardFile, v.Name, v.Query, err)
			}
			s = q.Query
		}
		out = append(out, query{source: "variable " + v.Name, expr: s})
	}
	return out
}

// ruleQueries returns the expr of every alert of the PrometheusRules in objs.
func ruleQueries(t testing.TB, objs []*unstructured.Unstructured) []query {
	t.Helper()
	var out []query
	for _, o := range objs {
		if o.GetKind() != "PrometheusRule" {
			continue
		}
		groups, _, _ := unstructured.NestedSlice(o.Object, "spec", "groups")
		for _, g := range groups {
			rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
			for _, r := range rules {
				rule := r.(map[string]any)
				name, _ := rule["alert"].(string)
				expr, _ := rule["expr"].(string)
				out = append(out, query{source: "alert " + name, expr: expr})
			}
		}
	}
	return out
}

// deadQueries returns, for each query that selects a series the scrape
// lacks, where it comes from and what is missing, sorted.
func (s scrape) deadQueries(qs []query) ([]string, error) {
	var dead []string
	for _, q := range qs {
		sels, err := selectors(q.expr)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", q.source, err)
		}
		if len(sels) == 0 {
			return nil, fmt.Errorf("%s: no metric in %q", q.source, q.expr)
		}
		for _, sel := range sels {
			if missing := s.missingSeries(sel); missing != "" {
				dead = append(dead, q.source+": "+missing)
			}
		}
	}
	sort.Strings(dead)
	return slices.Compact(dead), nil
}

// readDashboard returns the dashboard file.
func readDashboard(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// readMonitoringDoc returns doc/monitoring.md, which holds the alerts'
// runbooks.
func readMonitoringDoc(t testing.TB) string {
	t.Helper()
	data, err := os.ReadFile("../../doc/monitoring.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// definedQueries takes out of qs the queries that select a metric named
// prefix*, which another binary than the scraped one exposes, and checks
// them against defined, the names their source defines: it returns the
// other queries and what the taken ones select that is not defined.
func definedQueries(qs []query, prefix string, defined []string) (rest []query, undefined []string, err error) {
	for _, q := range qs {
		sels, err := selectors(q.expr)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", q.source, err)
		}
		if !slices.ContainsFunc(sels, func(s selector) bool { return strings.HasPrefix(s.metric, prefix) }) {
			rest = append(rest, q)
			continue
		}
		for _, s := range sels {
			if !slices.Contains(defined, s.metric) {
				undefined = append(undefined, fmt.Sprintf("%s: %s is not defined", q.source, s.metric))
			}
		}
	}
	return rest, undefined, nil
}
