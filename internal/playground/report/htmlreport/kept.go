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

package htmlreport

import (
	"fmt"
	"slices"

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
)

// keptLines is how many rejections a node's column shows, the most
// frequent first: a node that 40 pods met for 40 reasons would otherwise
// be a column of text. Each pod's explanation keeps the full list.
const keptLines = 3

// keptLine is a rejection explained pods met on a node: the plugin, its
// reason, how many pods.
type keptLine struct {
	Plugin, Reason string
	Pods           int
	last           int // 1 + the index of the last pod counted, to count each pod once
}

func (k keptLine) String() string {
	return fmt.Sprintf("kept off %d %s: %s: %s", k.Pods, plural(k.Pods, "pod", "pods"), k.Plugin, k.Reason)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// kept is what explained pods met on one node.
type kept struct {
	lines []keptLine
	pods  int
	last  int
}

// keptOff is, by node name, the rejections the explained pods of r met
// there, grouped by plugin and reason. A node holds few distinct reasons,
// so each is found by a scan; the work is one step per rejected node of
// each explained pod.
func keptOff(r report.Result) map[string]*kept {
	out := map[string]*kept{}
	for i, p := range r.Pods {
		if p.Explain == nil {
			continue
		}
		for _, g := range p.Explain.Filtered {
			for _, n := range g.Nodes {
				k := out[n]
				if k == nil {
					k = &kept{}
					out[n] = k
				}
				if k.last != i+1 {
					k.pods, k.last = k.pods+1, i+1
				}
				j := slices.IndexFunc(k.lines, func(l keptLine) bool { return l.Plugin == g.Plugin && l.Reason == g.Reason })
				if j < 0 {
					j = len(k.lines)
					k.lines = append(k.lines, keptLine{Plugin: g.Plugin, Reason: g.Reason})
				}
				if l := &k.lines[j]; l.last != i+1 {
					l.Pods, l.last = l.Pods+1, i+1
				}
			}
		}
	}
	return out
}

// setKept shows on nv at most keptLines of k, the most pods first (ties
// in the order met), and counts the rest.
func setKept(nv *nodeView, k *kept) {
	if k == nil {
		return
	}
	slices.SortStableFunc(k.lines, func(a, b keptLine) int { return b.Pods - a.Pods })
	nv.KeptPods = k.pods
	for _, l := range k.lines[:min(len(k.lines), keptLines)] {
		nv.Kept = append(nv.Kept, l.String())
	}
	nv.KeptMore = max(0, len(k.lines)-keptLines)
}
