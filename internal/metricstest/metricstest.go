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

// Package metricstest reads the plugins' metrics back from the registry that
// kube-scheduler's /metrics serves, for the plugins' unit tests.
package metricstest

import (
	"testing"

	"k8s.io/component-base/metrics/legacyregistry"
)

// Samples gathers the registry /metrics serves and returns the values of
// metric name for profile, keyed by the value of label by ("" when by is
// empty). A metric with no sample for the profile gives an empty map. Two
// samples with the same key fail the test: the collectors must sum the
// plugin instances of a profile.
func Samples(t testing.TB, name, profile, by string) map[string]float64 {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["profile"] != profile {
				continue
			}
			k := labels[by]
			if _, dup := got[k]; dup {
				t.Errorf("%s: two samples with profile %q and %s %q", name, profile, by, k)
			}
			switch {
			case m.GetCounter() != nil:
				got[k] = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				got[k] = m.GetGauge().GetValue()
			}
		}
	}
	return got
}
