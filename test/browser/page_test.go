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

package browser

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
	"github.com/adminsched/scheduler-plugins/internal/playground/report/htmlreport"
	"github.com/adminsched/scheduler-plugins/internal/playground/report/reporttest"
)

// TestObserverSeesRequestsAndErrors checks the instrument: a page without
// a Content-Security-Policy that loads an image is seen requesting it, and
// the report's policy blocks the same image with a console error, so the
// server never sees it.
func TestObserverSeesRequestsAndErrors(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	b := newBrowser(t, 800, 600)
	dir := t.TempDir()
	img := fmt.Sprintf(`<img src="%s/pixel.png" alt="">`, srv.URL)
	const policy = `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`

	open := filepath.Join(dir, "open.html")
	write(t, open, "<!DOCTYPE html><html><head></head><body>"+img+"</body></html>")
	b.load(t, open)
	b.painted(t)
	if requests, _ := b.seen(); !slices.Contains(requests, srv.URL+"/pixel.png") || hits.Load() == 0 {
		t.Errorf("a page without a policy loading %s/pixel.png: requests seen %q, server hits %d", srv.URL, requests, hits.Load())
	}

	hits.Store(0)
	closed := filepath.Join(dir, "closed.html")
	write(t, closed, "<!DOCTYPE html><html><head>"+policy+"</head><body>"+img+"</body></html>")
	b.load(t, closed)
	b.painted(t)
	_, errs := b.seen()
	if !slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, "Content Security Policy") }) || hits.Load() != 0 {
		t.Errorf("the report's policy and an image: errors seen %q, server hits %d; want a Content Security Policy error and no hit", errs, hits.Load())
	}
}

// TestMarkupRendersAsText: strings from a scenario that hold markup are
// shown as text by the browser: no element is made of them, no script runs.
func TestMarkupRendersAsText(t *testing.T) {
	const evil = `<script>console.error("ran")</script></svg><img src=x onerror="console.error(1)">"'`
	r := report.Result{
		Nodes: []report.NodeResult{{Name: "n1" + evil, Pods: 1}},
		Pods: []report.PodResult{
			{Namespace: "ns", Name: "p" + evil, Object: "Deployment/d" + evil, Node: "n1" + evil},
			{Namespace: "ns", Name: "q", Object: "Pod/q", Reason: "Unschedulable: " + evil},
		},
		Steps: []report.StepResult{{Step: "scale " + evil, Nodes: []report.NodeResult{{Name: "n1" + evil, Pods: 1}}}},
	}
	path := filepath.Join(t.TempDir(), "markup.html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	p := htmlreport.Page{Title: "title" + evil, Runs: []report.Run{{Config: "config" + evil, Result: r}},
		Expectations: []htmlreport.Expectation{{Name: "expect" + evil, Message: evil}}}
	if err := htmlreport.Write(f, p); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, 1200, 800)
	b.load(t, path)
	got := eval[struct {
		Scripts, Images, Texts int
		Title                  string
	}](t, b, `({Scripts: document.scripts.length, Images: document.images.length,
	  Texts: document.body.innerText.split('<script>console.error("ran")</script>').length - 1, Title: document.title})`)
	if got.Scripts != 0 || got.Images != 0 {
		t.Errorf("markup in the data made %d script and %d img elements, want none", got.Scripts, got.Images)
	}
	// The title, expectation and its message, config, node, pod, reason, step.
	if got.Texts < 7 {
		t.Errorf("the markup is shown as text %d times, want at least 7", got.Texts)
	}
	if !strings.HasSuffix(got.Title, evil) {
		t.Errorf("document title %q", got.Title)
	}
	b.clean(t, "markup report")
}

// TestLargeReportRenders: the 5,000-node, 50,000-pod report draws one bar
// per node and loads without a request or an error.
func TestLargeReportRenders(t *testing.T) {
	path := writeLarge(t, 5000)
	b := newBrowser(t, 1400, 900)
	b.load(t, path)
	bars := eval[int](t, b, `[...document.querySelectorAll('section.run svg.bars')][0].querySelectorAll('rect').length`)
	if bars != 5000 {
		t.Errorf("%d bars drawn, want one per node (5000)", bars)
	}
	b.clean(t, "5,000-node report")
}

// BenchmarkLoad loads the report of a replay with 10 pods per node, from
// disk, to its first painted frame; bytes/page is the file's size.
func BenchmarkLoad(b *testing.B) {
	for _, nodes := range []int{50, 500, 5000} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			path := writeLarge(b, nodes)
			st, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			br := newBrowser(b, 1400, 900)
			blank := filepath.Join(b.TempDir(), "blank.html")
			write(b, blank, "<!DOCTYPE html><title>blank</title>")
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				br.load(b, blank)
				b.StartTimer()
				br.load(b, path)
			}
			b.ReportMetric(float64(st.Size()), "bytes/page")
		})
	}
}

func writeLarge(tb testing.TB, nodes int) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), fmt.Sprintf("replay-%d.html", nodes))
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := htmlreport.Write(f, htmlreport.Page{Title: "replay", Runs: []report.Run{{Result: reporttest.Large(nodes, 10)}}}); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

func write(tb testing.TB, path, content string) {
	tb.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}
