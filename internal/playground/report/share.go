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
	"fmt"
	"io"
)

// AfterObjects is ShareResult.After once the objects settled, before any
// step.
const AfterObjects = "objects"

// ShareResult is a workload's on-demand share at one point of the run.
type ShareResult struct {
	// After is AfterObjects or the step, as its progress line shows it.
	After string `json:"after"`
	// Workload is the pods' workload: Kind namespace/name.
	Workload string `json:"workload"`
	// Policy is the OnDemandShare policy that counts it.
	Policy string `json:"policy"`
	// Pods are its live pods; OnDemand those bound to on-demand nodes;
	// Required the policy's minimum for Pods.
	Pods     int `json:"pods"`
	OnDemand int `json:"onDemand"`
	Required int `json:"required"`
}

// String is "Deployment shop/web: 6/6 on-demand of 20 pods (policy web)",
// with "BELOW THE MINIMUM" when fewer than required are on-demand.
func (s ShareResult) String() string {
	line := fmt.Sprintf("%s: %d/%d on-demand of %d %s (policy %s)", s.Workload, s.OnDemand, s.Required, s.Pods, plural(s.Pods, "pod", "pods"), s.Policy)
	if s.OnDemand < s.Required {
		line += ", BELOW THE MINIMUM"
	}
	return line
}

// WriteShareText writes the shares, one line per workload and point of
// the run, under a heading; nothing when there are none.
func WriteShareText(w io.Writer, indent string, shares []ShareResult) error {
	if len(shares) == 0 {
		return nil
	}
	if _, err := fmt.Fprintf(w, "%son-demand share (on-demand/required):\n", indent); err != nil {
		return err
	}
	for _, s := range shares {
		after := "after " + s.After
		if s.After == AfterObjects {
			after = "once the objects settled"
		}
		if _, err := fmt.Fprintf(w, "%s  %s: %s\n", indent, after, s); err != nil {
			return err
		}
	}
	return nil
}
