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

package source

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"
)

// Static serves configured seat counts, none in use.
type Static struct {
	features map[string]Feature
	now      func() time.Time
}

var _ Source = &Static{}

// NewStatic returns a source that reports seats[name] seats of each feature.
func NewStatic(seats map[string]int) (*Static, error) {
	if len(seats) == 0 {
		return nil, errors.New("static source: no feature")
	}
	s := &Static{features: make(map[string]Feature, len(seats)), now: time.Now}
	for name, n := range seats {
		if n < 0 || n > MaxCount {
			return nil, fmt.Errorf("static source: feature %q: seats %d must be from 0 to %d", name, n, MaxCount)
		}
		s.features[name] = Feature{Total: n}
	}
	return s, nil
}

// Read returns the configured seats; it never fails.
func (s *Static) Read(context.Context) (Reading, error) {
	// A copy: the caller may change what it is given.
	return Reading{Features: maps.Clone(s.features), Time: s.now()}, nil
}
