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

package normalize

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	fwk "k8s.io/kube-scheduler/framework"
)

func scoreList(raw []int64) fwk.NodeScoreList {
	var scores fwk.NodeScoreList
	for i, r := range raw {
		scores = append(scores, fwk.NodeScore{Name: fmt.Sprintf("node-%d", i), Score: r})
	}
	return scores
}

func TestMinMax(t *testing.T) {
	tests := []struct {
		name          string
		raw           []int64
		lowerIsBetter bool
		want          []int64
	}{
		{name: "empty list", raw: nil, want: nil},
		{name: "one node", raw: []int64{7}, want: []int64{100}},
		{name: "all equal", raw: []int64{3, 3, 3}, want: []int64{100, 100, 100}},
		{name: "all equal, lower is better", raw: []int64{0, 0}, lowerIsBetter: true, want: []int64{100, 100}},
		{name: "highest wins", raw: []int64{0, 1, 2}, want: []int64{0, 50, 100}},
		{name: "lowest wins", raw: []int64{0, 1, 2}, lowerIsBetter: true, want: []int64{100, 50, 0}},
		{name: "truncated towards the worse end", raw: []int64{10, 13, 40}, want: []int64{0, 10, 100}},
		{name: "truncated, lower is better", raw: []int64{10, 13, 40}, lowerIsBetter: true, want: []int64{100, 90, 0}},
		{name: "order is kept", raw: []int64{30, 10, 20}, want: []int64{100, 0, 50}},
		{name: "negative raw scores", raw: []int64{-10, 0, 10}, want: []int64{0, 50, 100}},
		{name: "large raw scores", raw: []int64{0, 1 << 50, 1 << 52}, want: []int64{0, 25, 100}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			scores := scoreList(tc.raw)
			MinMax(scores, tc.lowerIsBetter)
			var got []int64
			for i, s := range scores {
				if s.Name != fmt.Sprintf("node-%d", i) {
					t.Errorf("scores[%d] is node %s: the order changed", i, s.Name)
				}
				if s.Score < fwk.MinNodeScore || s.Score > fwk.MaxNodeScore {
					t.Errorf("score %d of %s out of range", s.Score, s.Name)
				}
				got = append(got, s.Score)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

func BenchmarkMinMax(b *testing.B) {
	raw := make([]int64, 5000)
	for i := range raw {
		raw[i] = int64(i % 97)
	}
	scores := scoreList(raw)
	b.ReportAllocs()
	for b.Loop() {
		for i := range scores {
			scores[i].Score = raw[i]
		}
		MinMax(scores, true)
	}
}
