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

package window

import (
	"testing"
	"time"

	"k8s.io/klog/v2/ktesting"
)

// annotationSource is the default annotation as the plugin reads it.
var annotationSource = Source{Key: key, Where: InAnnotations, Format: FormatIntervals}

// validValue is the i-th of distinct well-formed annotation values.
func validValue(i int) string {
	s := now.Add(time.Duration(i) * time.Minute)
	return s.Format(time.RFC3339) + "/" + s.Add(time.Minute).Format(time.RFC3339)
}

// TestWindowCacheBounded guards the bound of the parse cache: it never
// holds more than maxCached values.
func TestWindowCacheBounded(t *testing.T) {
	tests := []struct {
		name   string
		values int
	}{
		{name: "up to the bound", values: maxCached},
		{name: "past the bound", values: maxCached + 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			c := newCache(time.Hour)
			most := 0
			for i := range tc.values {
				if ws := c.windows(logger, "n", annotationSource, validValue(i)); len(ws) != 1 {
					t.Fatalf("value %d: %d windows, want 1", i, len(ws))
				}
				most = max(most, len(c.values))
			}
			if most > maxCached {
				t.Errorf("the cache held %d values, want at most %d", most, maxCached)
			}
		})
	}
}

// TestFullWindowCacheKeepsWhatItLogged guards the read-locked fast path:
// looking up cached values, well-formed or malformed and logged already,
// does not reset a full cache, so a malformed value is not logged again.
func TestFullWindowCacheKeepsWhatItLogged(t *testing.T) {
	tests := []struct {
		name   string
		lookup []string // after the cache is full
	}{
		{name: "malformed value again", lookup: []string{"soon"}},
		{name: "well-formed value, then the malformed one", lookup: []string{validValue(0), "soon"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			buffered := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
			c := newCache(time.Hour)
			c.windows(buffered, "n", annotationSource, "soon")
			for i := 0; len(c.values) < maxCached; i++ {
				c.windows(buffered, "n", annotationSource, validValue(i))
			}
			for _, v := range tc.lookup {
				c.windows(buffered, "n", annotationSource, v)
			}
			logged := 0
			for _, e := range buffered.GetSink().(ktesting.Underlier).GetBuffer().Data() {
				if e.Message == "Ignoring the node's maintenance windows" {
					logged++
				}
			}
			if logged != 1 {
				t.Errorf("the malformed value was logged %d times, want 1", logged)
			}
			if len(c.values) != maxCached {
				t.Errorf("the cache holds %d values, want %d: it was reset", len(c.values), maxCached)
			}
		})
	}
}
