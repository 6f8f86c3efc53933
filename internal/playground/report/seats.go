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

import "fmt"

// LicenseSeats are a license feature's seats, as the license server and the
// cluster's claims had them, for a pod that asks for some.
type LicenseSeats struct {
	// Feature is the feature's name on the license server.
	Feature string `json:"feature"`
	// Requested is how many of its seats the pod asks for.
	Requested int64 `json:"requested"`
	// Issued is the server's seats of the feature.
	Issued int `json:"issued"`
	// HeldByPods is how many seats the cluster's claims hold.
	HeldByPods int `json:"heldByPods"`
	// CheckedOutElsewhere is how many the server counts in use outside
	// the cluster.
	CheckedOutElsewhere int `json:"checkedOutElsewhere"`
}

// Free is how many seats no one holds: neither a pod nor anyone outside.
func (s LicenseSeats) Free() int {
	return max(0, s.Issued-s.HeldByPods-s.CheckedOutElsewhere)
}

// String says whether the pod's seats are free and where the others are:
// "no free seat of feature MATLAB: 10 issued, 6 held by pods, 4 checked
// out elsewhere".
func (s LicenseSeats) String() string {
	counts := fmt.Sprintf("%d issued, %d held by pods, %d checked out elsewhere", s.Issued, s.HeldByPods, s.CheckedOutElsewhere)
	free := s.Free()
	if free == 0 {
		return fmt.Sprintf("no free seat of feature %s: %s", s.Feature, counts)
	}
	return fmt.Sprintf("%d free %s of feature %s, the pod asks for %d: %s", free, plural(free, "seat", "seats"), s.Feature, s.Requested, counts)
}

func plural(n int, one, more string) string {
	if n == 1 {
		return one
	}
	return more
}
