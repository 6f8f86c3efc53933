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

// Package browser loads the playground's HTML reports in headless Chromium
// and checks what a person sees there: the node columns and their pods,
// the explanations the pods link to, the runs side by side, and that the
// page neither requests anything nor logs an error. make browser-test runs
// it with bin/playground; without Chromium it skips and says so.
package browser

import (
	"bytes"
	"flag"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var (
	playground  = flag.String("playground", "../../bin/playground", "the playground binary (make playground builds it)")
	assets      = flag.String("assets", "../../bin", "the embedded cluster's binaries (make envtest builds them)")
	screenshots = flag.String("screenshots", "", "directory to keep the reports' screenshots in (make report-screenshots: doc/images); empty: the test's temporary directory")
)

// runPlayground runs bin/playground from the repository's root with args and
// --html, and returns the report's path.
func runPlayground(t *testing.T, name string, args ...string) string {
	t.Helper()
	bin, err := filepath.Abs(*playground)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%v: build it with make playground", err)
	}
	assetsDir, err := filepath.Abs(*assets)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), name+".html")
	cmd := exec.Command(bin, append([]string{"--assets", assetsDir, "--html", out}, args...)...)
	cmd.Dir = "../.."
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("playground %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return out
}

// The page as laid out: what the layout script returns.
type (
	box struct{ X, Y, W, H float64 }
	pod struct {
		Name, Href, Outline string
		Moved               bool
		Box                 box
	}
	column struct {
		Name string
		Box  box
		Pods []pod
	}
	explanation struct {
		ID, Summary string
		Rows        []string // the heatmap's row heads, shown ones only
		Chosen      []struct{ Text, Border string }
	}
	run struct {
		ID        string
		Box       box
		Nodes     []column
		Explained []explanation
	}
)

// layout reads, for every run, the node columns and pod blocks a person
// sees (laid out with a size, not hidden) and the explanations.
const layout = `(() => {
  const box = e => { const r = e.getBoundingClientRect(); return {X: r.x, Y: r.y, W: r.width, H: r.height}; };
  const shown = e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden'; };
  return [...document.querySelectorAll('section.run')].map(run => ({
    ID: run.id, Box: box(run),
    Nodes: [...run.querySelectorAll('.node')].filter(shown).map(n => ({
      Name: n.querySelector('.name').textContent, Box: box(n),
      Pods: [...n.querySelectorAll('.pod')].filter(shown).map(p => ({
        Name: p.textContent, Href: p.getAttribute('href') || '', Moved: p.classList.contains('moved'),
        Outline: getComputedStyle(p).outlineStyle, Box: box(p)})),
    })),
    Explained: [...run.querySelectorAll('details.explain')].map(d => ({
      ID: d.id, Summary: d.querySelector('summary').textContent,
      Rows: [...d.querySelectorAll('table.heatmap tr')].filter(shown).map(tr => (tr.querySelector('th') || {}).textContent || ''),
      Chosen: [...d.querySelectorAll('table.heatmap th.chosen')].filter(shown).map(th => ({Text: th.textContent, Border: getComputedStyle(th).borderTopWidth})),
    })),
  }));
})()`

// TestTutorialReport: the tutorial's report with --explain shows three node
// columns side by side holding 3, 2 and 2 pods; each pod links to its
// explanation, whose heatmap has NodeLessPods' row and marks the node the
// pod is drawn on as chosen.
func TestTutorialReport(t *testing.T) {
	b := newBrowser(t, 1400, 900)
	path := runPlayground(t, "tutorial", "--explain")
	b.load(t, path)
	runs := eval[[]run](t, b, layout)
	if len(runs) != 1 {
		t.Fatalf("%d runs drawn, want 1", len(runs))
	}
	checkColumns(t, runs[0], []int{3, 2, 2})
	checkExplained(t, runs[0], "NodeLessPods")
	b.clean(t, "tutorial report")
	keepScreenshot(t, b, "playground-report.png")
}

// TestCompareReport: with --compare the two runs stand side by side, each
// with its three columns, and the pods that landed elsewhere are outlined.
func TestCompareReport(t *testing.T) {
	b := newBrowser(t, 1400, 900)
	path := runPlayground(t, "compare", "--explain", "--compare", "examples/scenarios/default-profile-config.yaml")
	b.load(t, path)
	runs := eval[[]run](t, b, layout)
	if len(runs) != 2 {
		t.Fatalf("%d runs drawn, want 2", len(runs))
	}
	if r1, r2 := runs[0].Box, runs[1].Box; r2.X < r1.X+r1.W || r2.Y > r1.Y+r1.H {
		t.Errorf("the runs are not side by side: %+v and %+v", r1, r2)
	}
	for i, r := range runs {
		if len(r.Nodes) != 3 {
			t.Errorf("%s: %d node columns, want 3", r.ID, len(r.Nodes))
		}
		// The default profile has no NodeLessPods.
		checkExplained(t, r, []string{"NodeLessPods", "NodeResourcesBalancedAllocation"}[i])
	}
	moved := eval[int](t, b, `document.querySelectorAll('#compare table tr').length - 1`)
	var outlined int
	for _, r := range runs {
		for _, n := range r.Nodes {
			for _, p := range n.Pods {
				if p.Moved {
					outlined++
					if p.Outline != "solid" {
						t.Errorf("%s: moved pod %s has outline %q, want solid", r.ID, p.Name, p.Outline)
					}
				}
			}
		}
	}
	// A moved pod is drawn in both runs (or is pending in one of them).
	if moved > 0 && (outlined < moved || outlined > 2*moved) {
		t.Errorf("%d pods listed as placed differently, %d blocks outlined", moved, outlined)
	}
	t.Logf("%d pods placed differently, %d blocks outlined", max(moved, 0), outlined)
	b.clean(t, "compare report")
	keepScreenshot(t, b, "playground-compare.png")
}

// checkColumns: r's node columns stand side by side in a row, each pod block inside
// its column and stacked, with the pod counts want in any order.
func checkColumns(t *testing.T, r run, want []int) {
	t.Helper()
	var counts []int
	for i, n := range r.Nodes {
		counts = append(counts, len(n.Pods))
		// Side by side in one row: right of the previous one, level with it.
		if i > 0 {
			if prev := r.Nodes[i-1].Box; n.Box.X < prev.X+prev.W || n.Box.Y >= prev.Y+prev.H || prev.Y >= n.Box.Y+n.Box.H {
				t.Errorf("columns %s and %s are not side by side: %+v, %+v", r.Nodes[i-1].Name, n.Name, prev, n.Box)
			}
		}
		ys := map[float64]bool{}
		for _, p := range n.Pods {
			if p.Box.X < n.Box.X || p.Box.X+p.Box.W > n.Box.X+n.Box.W+0.5 || p.Box.Y < n.Box.Y || p.Box.Y+p.Box.H > n.Box.Y+n.Box.H+0.5 {
				t.Errorf("pod %s is drawn outside its column %s: %+v in %+v", p.Name, n.Name, p.Box, n.Box)
			}
			if ys[p.Box.Y] {
				t.Errorf("pod %s is not stacked: another block of %s is at y=%v", p.Name, n.Name, p.Box.Y)
			}
			ys[p.Box.Y] = true
		}
	}
	slices.Sort(counts)
	sorted := slices.Clone(want)
	slices.Sort(sorted)
	if !slices.Equal(counts, sorted) {
		t.Errorf("%s: %d columns with %v pods, want %v", r.ID, len(r.Nodes), counts, want)
	}
}

// checkExplained: every pod block links to an explanation of that pod,
// whose heatmap has the row of the plugin row and one chosen column: the
// node the block is drawn on, framed.
func checkExplained(t *testing.T, r run, row string) {
	t.Helper()
	byID := map[string]explanation{}
	for _, e := range r.Explained {
		byID[e.ID] = e
	}
	pods := 0
	for _, n := range r.Nodes {
		for _, p := range n.Pods {
			pods++
			e, ok := byID[strings.TrimPrefix(p.Href, "#")]
			if !ok {
				t.Errorf("%s: pod %s on %s links to %q, not to an explanation", r.ID, p.Name, n.Name, p.Href)
				continue
			}
			if !strings.Contains(e.Summary, p.Name) || !strings.HasSuffix(e.Summary, "→ "+n.Name) {
				t.Errorf("%s: pod %s on %s links to the explanation %q", r.ID, p.Name, n.Name, e.Summary)
			}
			if !slices.Contains(e.Rows, row) {
				t.Errorf("%s: the heatmap of %s has no %s row: %q", r.ID, p.Name, row, e.Rows)
			}
			if len(e.Chosen) != 1 || e.Chosen[0].Text != n.Name+" (chosen)" || e.Chosen[0].Border != "2px" {
				t.Errorf("%s: the heatmap of %s marks %+v as chosen, want %s framed (2px)", r.ID, p.Name, e.Chosen, n.Name)
			}
		}
	}
	if pods == 0 {
		t.Errorf("%s: no pod drawn", r.ID)
	}
}

// keepScreenshot takes the visible part of the page, checks that it shows
// pod blocks (pixels of the workload palette), and writes it to
// -screenshots or the test's temporary directory.
func keepScreenshot(t *testing.T, b *browser, name string) {
	t.Helper()
	shot := b.screenshot(t)
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if n := paletteArea(img); n < 500 {
		t.Errorf("the screenshot shows %d pixels of pod colours: no pod blocks drawn", n)
	}
	dir := *screenshots
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes, %dx%d)", path, len(shot), img.Bounds().Dx(), img.Bounds().Dy())
}

// paletteArea counts the pixels of the report's eight workload colours.
func paletteArea(img image.Image) int {
	colours := map[string]bool{}
	for _, c := range []string{"8dd3c7", "ffffb3", "bebada", "fb8072", "80b1d3", "fdb462", "b3de69", "fccde5"} {
		colours[c] = true
	}
	n := 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if colours[fmt.Sprintf("%02x%02x%02x", r>>8, g>>8, bl>>8)] {
				n++
			}
		}
	}
	return n
}
