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

// Package normalize maps the raw scores of a score plugin onto the
// framework's range [fwk.MinNodeScore, fwk.MaxNodeScore], for NormalizeScore. Every
// plugin of this repository normalizes through it, so they rank nodes the
// same way.
package normalize

import (
	fwk "k8s.io/kube-scheduler/framework"
)

// MinMax maps scores in place, linearly, from [lowest, highest] onto
// [MinScore, MaxScore]: the highest raw score gets MaxScore, or the lowest
// when lowerIsBetter. Results are truncated towards the worse end. When every
// raw score is equal (one node, or nodes the plugin cannot tell apart), every
// node gets MaxScore, which leaves the ranking to the other plugins.
//
// Raw scores may be negative; their spread must stay below 2^63/100, which
// the plugins' bounded raw scores (pod counts, parts per million, summed
// weights) are far from.
func MinMax(scores fwk.NodeScoreList, lowerIsBetter bool) {
	if len(scores) == 0 {
		return
	}
	lo, hi := scores[0].Score, scores[0].Score
	for _, s := range scores[1:] {
		lo, hi = min(lo, s.Score), max(hi, s.Score)
	}
	span := hi - lo
	for i := range scores {
		switch {
		case span == 0:
			scores[i].Score = fwk.MaxNodeScore
		case lowerIsBetter:
			scores[i].Score = fwk.MinNodeScore + (hi-scores[i].Score)*(fwk.MaxNodeScore-fwk.MinNodeScore)/span
		default:
			scores[i].Score = fwk.MinNodeScore + (scores[i].Score-lo)*(fwk.MaxNodeScore-fwk.MinNodeScore)/span
		}
	}
}
