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

package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWriteShareText: one line per workload and point of the run, the
// deficit said when there is one, nothing without OnDemandShare.
func TestWriteShareText(t *testing.T) {
	shares := []ShareResult{
		{After: AfterObjects, Workload: "Deployment shop/web", Policy: "web", Pods: 10, OnDemand: 3, Required: 3},
		{After: "scale Deployment shop/web to 20", Workload: "Deployment shop/web", Policy: "web", Pods: 20, OnDemand: 5, Required: 6},
		{After: "scale Deployment shop/web to 1", Workload: "Deployment shop/web", Policy: "web", Pods: 1, OnDemand: 1, Required: 1},
	}
	var b strings.Builder
	if err := WriteShareText(&b, "", shares); err != nil {
		t.Fatal(err)
	}
	want := `on-demand share (on-demand/required):
  once the objects settled: Deployment shop/web: 3/3 on-demand of 10 pods (policy web)
  after scale Deployment shop/web to 20: Deployment shop/web: 5/6 on-demand of 20 pods (policy web), BELOW THE MINIMUM
  after scale Deployment shop/web to 1: Deployment shop/web: 1/1 on-demand of 1 pod (policy web)
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
	b.Reset()
	if err := WriteText(&b, Result{Share: shares[:1]}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "once the objects settled: Deployment shop/web: 3/3") {
		t.Errorf("WriteText lacks the share:\n%s", b.String())
	}
	b.Reset()
	if err := WriteText(&b, Result{}); err != nil || strings.Contains(b.String(), "on-demand") {
		t.Errorf("WriteText without OnDemandShare = %q, %v; want no share", b.String(), err)
	}
}
