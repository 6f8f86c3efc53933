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
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// requiredEnv, when set, turns a missing Chromium into a failure instead of
// a skip (make browser-test sets it once it has installed Chromium).
const requiredEnv = "BROWSER_TEST_REQUIRED"

// chromiumPath finds headless Chromium: $CHROMIUM, or chromium (Debian's
// package), chromium-browser or google-chrome on PATH.
func chromiumPath(tb testing.TB) string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "headless Chromium not found: install Debian's chromium package (make browser-test does: apt-get install chromium) or set CHROMIUM to a Chrome or Chromium binary"
	if os.Getenv(requiredEnv) != "" {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
	return ""
}

// browser is one headless Chromium with one tab. It records what a page
// must not do: request anything but its own file (or a data: URL), log a
// console error, or throw.
type browser struct {
	ctx context.Context

	mu       sync.Mutex
	page     string
	requests []string
	errors   []string
}

// newBrowser starts Chromium with a window of width x height; it stops
// when the test ends.
func newBrowser(tb testing.TB, width, height int) *browser {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(tb)),
		chromedp.UserDataDir(tb.TempDir()),
		chromedp.WindowSize(width, height),
		// Chromium's sandbox refuses to run as root, as CI does.
		chromedp.NoSandbox,
		chromedp.DisableGPU,
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	b := &browser{}
	ctx, cancel := chromedp.NewContext(allocCtx, chromedp.WithListener(b.observe))
	tb.Cleanup(func() { cancel(); cancelAlloc() })
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := cdp.Call(ctx, t, network.Enable, network.EnableParams{}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, t, cdplog.Enable, cdp.Empty{})
		return err
	}))
	if err != nil {
		tb.Fatalf("starting Chromium: %v", err)
	}
	b.ctx = ctx
	return b
}

// observe runs on chromedp's reading goroutine: it only records.
func (b *browser) observe(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		if u := ev.Request.URL; u != b.page && u != "about:blank" && !strings.HasPrefix(u, "data:") {
			b.requests = append(b.requests, u)
		}
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			b.errors = append(b.errors, "console."+string(ev.Type)+" called")
		}
	case *runtime.EventExceptionThrown:
		b.errors = append(b.errors, "exception: "+ev.ExceptionDetails.Text)
	case *cdplog.EventEntryAdded:
		if ev.Entry.Level == cdplog.EntryLevelError {
			b.errors = append(b.errors, string(ev.Entry.Source)+": "+ev.Entry.Text)
		}
	}
}

// load opens the file at path and waits for its load event and a frame.
func (b *browser) load(tb testing.TB, path string) {
	tb.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		tb.Fatal(err)
	}
	u := (&url.URL{Scheme: "file", Path: abs}).String()
	b.mu.Lock()
	b.page, b.requests, b.errors = u, nil, nil
	b.mu.Unlock()
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(u)); err != nil {
		tb.Fatalf("loading %s: %v", path, err)
	}
	b.painted(tb)
}

// painted waits until the browser has laid out and painted a frame.
func (b *browser) painted(tb testing.TB) {
	tb.Helper()
	const frame = `new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))`
	if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](frame, chromedp.EvalAwaitPromise)); err != nil {
		tb.Fatalf("waiting for a frame: %v", err)
	}
}

// eval evaluates expr in the page and decodes its JSON value into T.
func eval[T any](tb testing.TB, b *browser, expr string) T {
	tb.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		tb.Fatalf("evaluating in the page: %v", err)
	}
	return v
}

// screenshot is the visible part of the page as PNG.
func (b *browser) screenshot(tb testing.TB) []byte {
	tb.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		tb.Fatalf("screenshot: %v", err)
	}
	return png
}

// clean fails the test when the page made a request or logged an error.
// The events of a load can trail its load event by a moment: a frame is
// waited for first.
func (b *browser) clean(tb testing.TB, what string) {
	tb.Helper()
	b.painted(tb)
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range b.requests {
		tb.Errorf("%s: the page requested %s", what, r)
	}
	for _, e := range b.errors {
		tb.Errorf("%s: console error: %s", what, e)
	}
}

// seen returns the requests and errors recorded since the last load.
func (b *browser) seen() (requests, errors []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.requests), slices.Clone(b.errors)
}
