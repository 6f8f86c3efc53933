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

package maintenancewindow

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/klog/v2"
)

// window is one planned maintenance interval, [start, end).
type window struct {
	start, end time.Time
}

// maxWindows bounds how many intervals one annotation may hold, so that a
// runaway value cannot make every Filter call slow.
const maxWindows = 64

// parseWindows parses an annotation value: RFC 3339 intervals START/END,
// comma-separated, in any order. Blank items are ignored; an empty value
// has no window. The windows come back sorted by start.
func parseWindows(value string) ([]window, error) {
	var ws []window
	for item := range strings.SplitSeq(value, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if len(ws) == maxWindows {
			return nil, fmt.Errorf("more than %d intervals", maxWindows)
		}
		startText, endText, ok := strings.Cut(item, "/")
		if !ok {
			return nil, fmt.Errorf("interval %q: want START/END, two RFC 3339 times", item)
		}
		start, err := time.Parse(time.RFC3339, strings.TrimSpace(startText))
		if err != nil {
			return nil, fmt.Errorf("interval %q: start: %w", item, err)
		}
		end, err := time.Parse(time.RFC3339, strings.TrimSpace(endText))
		if err != nil {
			return nil, fmt.Errorf("interval %q: end: %w", item, err)
		}
		if !end.After(start) {
			return nil, fmt.Errorf("interval %q: the end is not after the start", item)
		}
		ws = append(ws, window{start: start, end: end})
	}
	slices.SortFunc(ws, func(a, b window) int { return a.start.Compare(b.start) })
	return ws, nil
}

// blockedUntil returns, when a window is open at now or opens within
// avoidWithin of now, the end of the maintenance that blocks the node
// (through any windows that overlap or touch it), and the window's start.
// ws must be sorted by start.
func blockedUntil(ws []window, now time.Time, avoidWithin time.Duration) (start, until time.Time, blocked bool) {
	horizon := now.Add(avoidWithin)
	for i, w := range ws {
		if !w.end.After(now) {
			continue // past
		}
		if w.start.After(horizon) {
			return time.Time{}, time.Time{}, false
		}
		until = w.end
		for _, next := range ws[i+1:] {
			if next.start.After(until) {
				break
			}
			until = later(until, next.end)
		}
		return w.start, until, true
	}
	return time.Time{}, time.Time{}, false
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// nextStart returns how long until the next window that has not ended
// opens: 0 when one is open, ok false when there is none.
func nextStart(ws []window, now time.Time) (time.Duration, bool) {
	for _, w := range ws {
		if !w.end.After(now) {
			continue
		}
		if !w.start.After(now) {
			return 0, true
		}
		return w.start.Sub(now), true
	}
	return 0, false
}

// maxCached bounds the parse cache; past it the cache starts over, and a
// malformed value may be logged once more.
const maxCached = 4096

// parsed is a source's value, parsed.
type parsed struct {
	windows []window
	err     error
}

// cacheKey is a value as read by one format: the same text may mean
// different windows in two formats. A struct key, so that a lookup
// allocates nothing.
type cacheKey struct {
	format format
	value  string
}

// loggedKey is a malformed value of one source on one node.
type loggedKey struct {
	node, key, value string
}

// windowCache parses each distinct value once per format (nodes of a pool
// usually share one) and logs a malformed value once per node, source and
// value. Filter and Score call it from parallel goroutines. providerDuration
// is the length given to the windows of formats that publish a start only.
type windowCache struct {
	providerDuration time.Duration

	mu     sync.RWMutex
	values map[cacheKey]parsed
	logged map[loggedKey]struct{}
}

func newWindowCache(providerDuration time.Duration) *windowCache {
	return &windowCache{providerDuration: providerDuration, values: map[cacheKey]parsed{}, logged: map[loggedKey]struct{}{}}
}

// errMalformed marks a value that could not be parsed.
var errMalformed = errors.New("malformed maintenance window annotation")

// windows returns the windows of value, src's value on node; a malformed
// value has none, and is logged once per node, source and value.
func (c *windowCache) windows(logger klog.Logger, node string, src source, value string) []window {
	k := cacheKey{src.format, value}
	c.mu.RLock()
	p, ok := c.values[k]
	logged := false
	if ok && p.err != nil {
		// Only a malformed value needs the logged key hashed.
		_, logged = c.logged[loggedKey{node, src.key, value}]
	}
	c.mu.RUnlock()
	if ok && (p.err == nil || logged) {
		return p.windows
	}
	if !ok {
		ws, err := c.parseFormat(src.format, value)
		p = parsed{windows: ws, err: err}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.storeLocked(k, p)
	if p.err != nil {
		if _, done := c.logged[loggedKey{node, src.key, value}]; !done {
			c.logged[loggedKey{node, src.key, value}] = struct{}{}
			logger.Error(fmt.Errorf("%w: %w", errMalformed, p.err), "Ignoring the node's maintenance windows",
				"node", node, "source", src.where.String(), "key", src.key, "value", value)
		}
		return nil
	}
	return p.windows
}

// parseFormat parses value in format f.
func (c *windowCache) parseFormat(f format, value string) ([]window, error) {
	if f == formatUnixStart {
		return parseUnixStart(value, c.providerDuration)
	}
	return parseWindows(value)
}

// storeLocked caches p for k, starting over past maxCached. c.mu must be
// held.
func (c *windowCache) storeLocked(k cacheKey, p parsed) {
	if len(c.values) >= maxCached {
		c.values = map[cacheKey]parsed{}
		c.logged = map[loggedKey]struct{}{}
	}
	c.values[k] = p
}

// parse returns the windows of value in format f, or why it does not parse,
// through the cache and without logging: the metrics' scrape reads every
// node's value, and Filter already logs a malformed one.
func (c *windowCache) parse(f format, value string) ([]window, error) {
	k := cacheKey{f, value}
	c.mu.RLock()
	p, ok := c.values[k]
	c.mu.RUnlock()
	if ok {
		return p.windows, p.err
	}
	ws, err := c.parseFormat(f, value)
	c.mu.Lock()
	c.storeLocked(k, parsed{windows: ws, err: err})
	c.mu.Unlock()
	return ws, err
}
