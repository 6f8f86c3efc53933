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
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/internal/playground"
	"github.com/adminsched/scheduler-plugins/internal/playground/report"
)

var (
	// The scheduler's -v=10 lines, written by prioritizeNodes from the
	// framework's RunScorePlugins result: the weighted score of a plugin
	// and the total of a node.
	pluginScoredRE = regexp.MustCompile(`"Plugin scored node for pod".*?\bpod="([^"]+)".*?\bplugin="([^"]+)".*?\bnode="([^"]+)".*?\bscore=(-?\d+)`)
	finalScoreRE   = regexp.MustCompile(`"Calculated node's final score for pod".*?\bpod="([^"]+)".*?\bnode="([^"]+)".*?\bscore=(-?\d+)`)
)

// checkExplanation checks what holds for any explained, bound pod: the
// explanation's chosen node is the node the API server has, every
// candidate's total is the sum of weight*normalized score, and no
// candidate beats the chosen node.
func checkExplanation(t *testing.T, p report.PodResult) {
	t.Helper()
	e := p.Explain
	if e == nil {
		t.Errorf("pod %s: no explanation", p.Name)
		return
	}
	if p.Node == "" || e.Chosen != p.Node {
		t.Errorf("pod %s bound to %q, the explanation chose %q", p.Name, p.Node, e.Chosen)
	}
	chosen := -1
	var best int64
	for i, c := range e.Candidates {
		var sum int64
		for j, s := range c.Scores {
			if s.Plugin != e.Plugins[j].Name || s.Weight != e.Plugins[j].Weight {
				t.Errorf("pod %s, node %s: score %d is %s weight %d, want %+v", p.Name, c.Node, j, s.Plugin, s.Weight, e.Plugins[j])
			}
			if s.Normalized < 0 || s.Normalized > 100 || s.Weighted != s.Normalized*int64(s.Weight) {
				t.Errorf("pod %s, node %s: %+v", p.Name, c.Node, s)
			}
			sum += s.Normalized * int64(s.Weight)
		}
		if sum != c.Total {
			t.Errorf("pod %s, node %s: sum of weight*normalized %d, total %d", p.Name, c.Node, sum, c.Total)
		}
		if c.Chosen {
			chosen = i
		}
		best = max(best, c.Total)
	}
	if chosen < 0 || e.Candidates[chosen].Node != e.Chosen {
		t.Errorf("pod %s: the chosen node %s is not marked among the candidates %+v", p.Name, e.Chosen, e.Candidates)
	} else if e.Scored && e.Candidates[chosen].Total != best {
		t.Errorf("pod %s: chosen %s totals %d, a candidate has %d", p.Name, e.Chosen, e.Candidates[chosen].Total, best)
	}
}

// TestExplainTutorial explains the tutorial and checks every scheduled pod's
// breakdown against an independent source: the scheduler's own -v=10 log
// lines, which print each plugin's weighted score and each node's total as
// the framework computed them.
func TestExplainTutorial(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "playground.log")
	logger, closeLog, err := setupLogging(logPath, 10)
	if err != nil {
		t.Fatal(err)
	}
	ctx := klog.NewContext(context.Background(), logger)
	session, err := playground.Play(ctx, playground.Options{
		Assets: assets, Scenario: tutorial, Configs: []string{shippedConfig},
		Timeout: 60 * time.Second, WorkDir: dir, Explain: true, ExplainNodes: 10,
	})
	closeLog()
	if err != nil {
		t.Fatalf("Play: %v", err)
	}
	logs, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	// The last value per pod and node (and plugin) wins, as the
	// explanation keeps the last attempt.
	totals := map[string]int64{}   // pod/node
	weighted := map[string]int64{} // pod/node/plugin
	for _, line := range strings.Split(string(logs), "\n") {
		if m := pluginScoredRE.FindStringSubmatch(line); m != nil {
			v, _ := strconv.ParseInt(m[4], 10, 64)
			weighted[m[1]+"/"+m[3]+"/"+m[2]] = v
		} else if m := finalScoreRE.FindStringSubmatch(line); m != nil {
			v, _ := strconv.ParseInt(m[3], 10, 64)
			totals[m[1]+"/"+m[2]] = v
		}
	}
	if len(totals) == 0 {
		t.Fatalf("no \"Calculated node's final score\" line in the -v=10 log")
	}

	r := session.Runs[0].Result
	if len(r.Pods) != 7 {
		t.Fatalf("%d pods, want 7", len(r.Pods))
	}
	for _, p := range r.Pods {
		checkExplanation(t, p)
		e := p.Explain
		if e == nil {
			continue
		}
		if !e.Scored || e.Feasible != 3 || len(e.Candidates) != 3 || len(e.Filtered) != 0 || e.Attempt != 1 {
			t.Errorf("pod %s: %d feasible, %d candidates, scored %v, filtered %v, attempt %d; want the 3 nodes scored in 1 attempt",
				p.Name, e.Feasible, len(e.Candidates), e.Scored, e.Filtered, e.Attempt)
		}
		pod := p.Namespace + "/" + p.Name
		for _, c := range e.Candidates {
			if got, ok := totals[pod+"/"+c.Node]; !ok || got != c.Total {
				t.Errorf("pod %s, node %s: total %d, the scheduler logged %d (found %v)", p.Name, c.Node, c.Total, got, ok)
			}
			for _, s := range c.Scores {
				if got, ok := weighted[pod+"/"+c.Node+"/"+s.Plugin]; !ok || got != s.Weighted {
					t.Errorf("pod %s, node %s, plugin %s: weighted %d, the scheduler logged %d (found %v)", p.Name, c.Node, s.Plugin, s.Weighted, got, ok)
				}
			}
		}
		// NodeLessPods, weight 3, is in the breakdown.
		if i := indexOf(e.Plugins, "NodeLessPods"); i < 0 || e.Plugins[i].Weight != 3 {
			t.Errorf("pod %s: plugins %+v, want NodeLessPods with weight 3", p.Name, e.Plugins)
		}
	}
}

func indexOf(ps []report.PluginWeight, name string) int {
	for i, p := range ps {
		if p.Name == name {
			return i
		}
	}
	return -1
}

// TestExplainCompare runs the tutorial with the shipped config and the
// default profile, explained, in JSON decoded into the exported types, then
// renders the same runs as text; and checks that --explain-nodes limits the
// candidates.
func TestExplainCompare(t *testing.T) {
	code, out, _ := runPlayground(t, "--config", shippedConfig, "--compare", defaultProfile, "--scenario", tutorial,
		"--explain", "--explain-nodes", "2", "--output", "json")
	if code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
	var doc struct {
		Runs []report.Run `json:"runs"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("decoding the JSON output into the exported types: %v\n%s", err, out)
	}
	if len(doc.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(doc.Runs))
	}
	// Both configs name their profile custom-scheduler.
	const profile = "custom-scheduler"
	for i, run := range doc.Runs {
		for _, p := range run.Result.Pods {
			checkExplanation(t, p)
			if p.Explain == nil {
				continue
			}
			if p.Explain.Profile != profile || len(p.Explain.Candidates) != 2 {
				t.Errorf("run %d, pod %s: profile %q, %d candidates; want %s and 2", i+1, p.Name, p.Explain.Profile, len(p.Explain.Candidates), profile)
			}
			if hasNLP := indexOf(p.Explain.Plugins, "NodeLessPods") >= 0; hasNLP != (i == 0) {
				t.Errorf("run %d, pod %s: NodeLessPods among the plugins: %v", i+1, p.Name, hasNLP)
			}
		}
	}
	var text bytes.Buffer
	if err := writeOutput(&text, "text", true, doc.Runs); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"explanations", "default/test-pod-1\n  [1] " + shippedConfig + " -> tutorial-", "  [2] " + defaultProfile + " -> tutorial-", "NodeLessPods", "total"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text output lacks %q:\n%s", s, text.String())
		}
	}
}
