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
	"fmt"
	"time"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
)

// New builds the source c configures. c should be validated
// (config.Validate): New checks only what it needs to build one.
func New(c *config.Configuration) (Source, error) {
	s := c.Source
	n := 0
	for _, set := range []bool{s.Static != nil, s.LMStat != nil, s.HTTP != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, fmt.Errorf("source: exactly one of static, lmstat and http must be set, not %d", n)
	}
	switch {
	case s.Static != nil:
		seats := make(map[string]int, len(c.Features))
		for i, f := range c.Features {
			if f.Seats == nil {
				return nil, fmt.Errorf("features[%d].seats: required by the static source", i)
			}
			if _, dup := seats[f.Name]; dup {
				return nil, fmt.Errorf("features[%d].name: duplicate value %q", i, f.Name)
			}
			seats[f.Name] = int(*f.Seats)
		}
		return NewStatic(seats)
	case s.LMStat != nil:
		return NewLMStat(s.LMStat.Command, timeout(s.LMStat.Timeout.Duration))
	default:
		return NewHTTP(s.HTTP.URL, timeout(s.HTTP.Timeout.Duration), s.HTTP.CAFile)
	}
}

// timeout is d, or the default when the configuration was not defaulted.
func timeout(d time.Duration) time.Duration {
	if d == 0 {
		return config.DefaultTimeout
	}
	return d
}
