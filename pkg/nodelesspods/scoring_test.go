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

package nodelesspods

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

func TestNormalizeScore(t *testing.T) {
	tests := []struct {
		name  string
		mode  config.NodeLessPodsMode
		loads []int64
		want  []int64
	}{
		{name: "empty list", mode: config.NodeLessPodsLeastPods, loads: nil, want: nil},
		{name: "one node", mode: config.NodeLessPodsLeastPods, loads: []int64{7}, want: []int64{100}},
		{name: "all equal, least", mode: config.NodeLessPodsLeastPods, loads: []int64{3, 3, 3}, want: []int64{100, 100, 100}},
		{name: "all equal, most", mode: config.NodeLessPodsMostPods, loads: []int64{0, 0}, want: []int64{100, 100}},
		{name: "least: fewest wins", mode: config.NodeLessPodsLeastPods, loads: []int64{0, 1, 2}, want: []int64{100, 50, 0}},
		{name: "most: most wins", mode: config.NodeLessPodsMostPods, loads: []int64{0, 1, 2}, want: []int64{0, 50, 100}},
		{name: "least: linear, truncated", mode: config.NodeLessPodsLeastPods, loads: []int64{10, 13, 40}, want: []int64{100, 90, 0}},
		{name: "most: linear, truncated", mode: config.NodeLessPodsMostPods, loads: []int64{10, 13, 40}, want: []int64{0, 10, 100}},
		{name: "more than 100 pods", mode: config.NodeLessPodsLeastPods, loads: []int64{150, 250, 350}, want: []int64{100, 50, 0}},
		{name: "relative loads", mode: config.NodeLessPodsLeastPods, loads: []int64{0, loadPerFullNode / 4, loadPerFullNode}, want: []int64{100, 75, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl := &NodeLessPods{mode: tc.mode}
			var scores fwk.NodeScoreList
			for i, l := range tc.loads {
				scores = append(scores, fwk.NodeScore{Name: string(rune('a' + i)), Score: l})
			}
			if st := pl.NormalizeScore(context.Background(), nil, nil, scores); !st.IsSuccess() {
				t.Fatalf("NormalizeScore: %v", st)
			}
			var got []int64
			for _, s := range scores {
				got = append(got, s.Score)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}
