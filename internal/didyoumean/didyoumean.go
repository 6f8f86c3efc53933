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

// Package didyoumean finds the name a user meant when the one written is
// none of those expected: a plugin, a flag, a scenario field, a namespace.
package didyoumean

import (
	"slices"
	"strings"
)

// Closest returns the candidate nearest to name when it is near enough to
// be a typo: equal but for case, or at most a third of its letters apart
// (at least one). Ties go to the candidate first in sorted order, so that
// the answer does not depend on the order given; "" when none is near.
func Closest(name string, candidates []string) string {
	sorted := slices.Sorted(slices.Values(candidates))
	for _, c := range sorted {
		if strings.EqualFold(c, name) {
			return c
		}
	}
	best, bestDist := "", len(name)/3+1
	lower := strings.ToLower(name)
	for _, c := range sorted {
		if d := EditDistance(lower, strings.ToLower(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// EditDistance is the number of edits that turn a into b: a letter
// inserted, deleted, replaced, or two adjacent letters swapped (optimal
// string alignment), over bytes: the names compared are ASCII. A swap
// counts one, as the typo it is ("shpo" for "shop").
func EditDistance(a, b string) int {
	// rows[i%3] is row i of the table; row i-2 is needed for swaps.
	var rows [3][]int
	for k := range rows {
		rows[k] = make([]int, len(b)+1)
	}
	for j := range rows[0] {
		rows[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur, prev, prev2 := rows[i%3], rows[(i-1)%3], rows[(i+1)%3]
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
	}
	return rows[len(a)%3][len(b)]
}
