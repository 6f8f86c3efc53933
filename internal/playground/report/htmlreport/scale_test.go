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

package htmlreport

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
)

// large is a replay's shape: nodes nodes holding perNode pods each, of 20
// Deployments, with one pod in a hundred unschedulable, a step and ten
// explained pods.
func large(nodes, perNode int) report.Result {
	r := report.Result{Nodes: make([]report.NodeResult, nodes), Pods: make([]report.PodResult, 0, nodes*perNode)}
	for i := range r.Nodes {
		r.Nodes[i] = report.NodeResult{Name: fmt.Sprintf("ip-10-0-%d-%d.ec2.internal", i/256, i%256)}
	}
	for i := range nodes * perNode {
		p := report.PodResult{Namespace: "prod", Name: fmt.Sprintf("app-%d-7d9f8c6b5-%05d", i%20, i), Object: fmt.Sprintf("Deployment/app-%d", i%20)}
		if i%100 == 99 {
			p.Reason = "Unschedulable: 0/5000 nodes are available: 5000 Insufficient cpu"
		} else {
			n := &r.Nodes[i%nodes]
			p.Node = n.Name
			n.Pods++
		}
		if i < 10 {
			p.Explain = explained().Pods[0].Explain
		}
		r.Pods = append(r.Pods, p)
	}
	r.Steps = []report.StepResult{{Step: "scale Deployment prod/app-0 to 3000", Nodes: r.Nodes}}
	return r
}

// TestLargeIsCompact: beyond CompactNodes nodes the page has no pod block
// and says why; at CompactNodes it has one per bound pod. The 5,000-node,
// 50,000-pod page stays under 5 MB.
func TestLargeIsCompact(t *testing.T) {
	out, doc := render(t, Page{Runs: []report.Run{{Result: large(CompactNodes, 2)}}})
	if got := len(byClass(doc, "pod")); got != 2*CompactNodes {
		t.Errorf("%d nodes: %d pod blocks, want %d", CompactNodes, got, 2*CompactNodes)
	}
	if strings.Contains(out, "drawn as bars") {
		t.Errorf("%d nodes: the page says it is compact", CompactNodes)
	}
	out, doc = render(t, Page{Runs: []report.Run{{Result: large(CompactNodes+1, 2)}}})
	if got := len(byClass(doc, "pod")); got != 0 {
		t.Errorf("%d nodes: %d pod blocks, want none", CompactNodes+1, got)
	}
	if !strings.Contains(out, fmt.Sprintf("More than %d nodes", CompactNodes)) {
		t.Errorf("%d nodes: the page does not say it is compact", CompactNodes+1)
	}
	if got := len(byTag(byClass(doc, "bars")[0], "rect")); got != CompactNodes+1 {
		t.Errorf("%d count bars, want one per node", got)
	}
	lane := byClass(doc, "lane")
	if len(lane) != 1 || !strings.Contains(text(lane[0]), "10Unschedulable: 0/5000") {
		t.Errorf("unscheduled pods not counted by reason")
	}

	start := time.Now()
	var b bytes.Buffer
	if err := Write(&b, Page{Runs: []report.Run{{Result: large(5000, 10)}}}); err != nil {
		t.Fatal(err)
	}
	t.Logf("5,000 nodes, 50,000 pods: %d bytes in %v", b.Len(), time.Since(start))
	if b.Len() > 5<<20 {
		t.Errorf("%d bytes, want at most 5 MB", b.Len())
	}
}

// BenchmarkLarge writes the 5,000-node, 50,000-pod page, alone and as a
// comparison of two runs; bytes/page is its size.
func BenchmarkLarge(b *testing.B) {
	r := large(5000, 10)
	for _, runs := range []int{1, 2} {
		p := Page{Title: "replay", Runs: make([]report.Run, runs)}
		for i := range p.Runs {
			p.Runs[i] = report.Run{Config: fmt.Sprint(i), Result: r}
		}
		b.Run(fmt.Sprintf("runs=%d", runs), func(b *testing.B) {
			var c countWriter
			for b.Loop() {
				c = 0
				if err := Write(&c, p); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(c), "bytes/page")
		})
	}
}

type countWriter int

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}

var _ io.Writer = (*countWriter)(nil)
