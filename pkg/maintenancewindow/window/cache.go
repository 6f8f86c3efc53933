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
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/klog/v2"
)

// maxCached bounds the parse cache; past it the cache starts over, and a
// malformed value may be logged once more.
const maxCached = 4096

// parsed is a source's value, parsed.
type parsed struct {
	windows []Window
	err     error
}

// cacheKey is a value as read by one format: the same text may mean
// different windows in two formats. A struct key, so that a lookup
// allocates nothing.
type cacheKey struct {
	format Format
	value  string
}

// loggedKey is a malformed value of one source on one node.
type loggedKey struct {
	node, key, value string
}

// cache parses each distinct value once per format (nodes of a pool
// usually share one) and logs a malformed value once per node, source and
// value. Filter and Score call it from parallel goroutines. providerDuration
// is the length given to the windows of formats that publish a start only.
type cache struct {
	providerDuration time.Duration

	mu     sync.RWMutex
	values map[cacheKey]parsed
	logged map[loggedKey]struct{}
}

func newCache(providerDuration time.Duration) *cache {
	return &cache{providerDuration: providerDuration, values: map[cacheKey]parsed{}, logged: map[loggedKey]struct{}{}}
}

// errMalformed marks a value that could not be parsed.
var errMalformed = errors.New("malformed maintenance window annotation")

// windows returns the windows of value, src's value on node; a malformed
// value has none, and is logged once per node, source and value.
func (c *cache) windows(logger klog.Logger, node string, src Source, value string) []Window {
	k := cacheKey{src.Format, value}
	c.mu.RLock()
	p, ok := c.values[k]
	logged := false
	if ok && p.err != nil {
		// Only a malformed value needs the logged key hashed.
		_, logged = c.logged[loggedKey{node, src.Key, value}]
	}
	c.mu.RUnlock()
	if ok && (p.err == nil || logged) {
		return p.windows
	}
	if !ok {
		ws, err := c.parseFormat(src.Format, value)
		p = parsed{windows: ws, err: err}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.storeLocked(k, p)
	if p.err != nil {
		if _, done := c.logged[loggedKey{node, src.Key, value}]; !done {
			c.logged[loggedKey{node, src.Key, value}] = struct{}{}
			logger.Error(fmt.Errorf("%w: %w", errMalformed, p.err), "Ignoring the node's maintenance windows",
				"node", node, "source", src.Where.String(), "key", src.Key, "value", value)
		}
		return nil
	}
	return p.windows
}

// parseFormat parses value in format f.
func (c *cache) parseFormat(f Format, value string) ([]Window, error) {
	if f == FormatUnixStart {
		return ParseUnixStart(value, c.providerDuration)
	}
	return Parse(value)
}

// storeLocked caches p for k, starting over past maxCached. c.mu must be
// held.
func (c *cache) storeLocked(k cacheKey, p parsed) {
	if len(c.values) >= maxCached {
		c.values = map[cacheKey]parsed{}
		c.logged = map[loggedKey]struct{}{}
	}
	c.values[k] = p
}

// parse returns the windows of value in format f, or why it does not parse,
// through the cache and without logging: the metrics' scrape reads every
// node's value, and Filter already logs a malformed one.
func (c *cache) parse(f Format, value string) ([]Window, error) {
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
