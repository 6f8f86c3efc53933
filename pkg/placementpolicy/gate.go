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

package placementpolicy

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/sets"
)

// gate is a necessary condition for a rule to apply to a pod, compiled once
// from the rules: the pod's namespace is one that a rule lists, or the pod
// carries a label key that a rule's podSelector cannot match without.
// Passing it says nothing; failing it means that no rule applies.
//
// It exists for the pods no rule selects, most pods of most clusters. In a
// scheduling cycle PreFilter and PreScore run after the other plugins have
// walked hundreds of nodes, so the plugin's own data is out of the CPU's
// caches: evaluating every rule (selectors, sets, the namespace lister)
// costs a cache miss per object it touches, several times the work itself.
// The gate reads the pod, which the framework has just read, and a few
// strings packed next to each other.
type gate struct {
	// nsLens and keyLens have bit lenBit(n) set when a namespace, or a key,
	// is n bytes long: most pods fail the gate on these masks alone, which
	// live in the plugin's first cache line, without reading a string.
	nsLens, keyLens uint64
	// key is the label key when there is only one, looked up in the pod's
	// labels from the gate itself: no other cache line is read for it.
	key string
	// lists holds the namespaces and the keys when there are more.
	lists *gateLists
	// open: some rule may apply to any pod, whatever its namespace and
	// labels (a rule with neither namespaces nor a podSelector that
	// requires a key).
	open bool
}

// gateLists are the namespaces and keys themselves, for the pods whose
// namespace has a length the mask holds, and for more than one key.
type gateLists struct {
	// strs holds the namespaces, then the keys, over one string buffer;
	// namespaceSet replaces the namespaces when there are many. keys are
	// the keys when there are two to shortList of them, looked up one by
	// one in the pod's labels: in a scheduling cycle a lookup costs less
	// than starting an iteration of the labels. keySet is set when there
	// are more.
	strs         []string
	nNamespaces  int
	namespaceSet sets.Set[string]
	keys         []string
	keySet       sets.Set[string]
}

func lenBit(n int) uint64 { return 1 << min(n, 63) }

// shortList is how many strings a linear scan compares before a set lookup
// is cheaper: a scan of packed strings compares lengths first.
const shortList = 8

// keyRequired reports whether a requirement fails on a pod without its key.
func keyRequired(op selection.Operator) bool {
	switch op {
	case selection.In, selection.Equals, selection.DoubleEquals, selection.Exists, selection.GreaterThan, selection.LessThan:
		return true
	}
	return false
}

func newGate(rules []*rule) gate {
	var namespaces, keys []string
	seenNS, seenKey := sets.New[string](), sets.New[string]()
	var g gate
	lists := &gateLists{}
	for _, r := range rules {
		if r.namespaces != nil {
			for ns := range r.namespaces {
				if !seenNS.Has(ns) {
					seenNS.Insert(ns)
					namespaces = append(namespaces, ns)
				}
			}
			continue
		}
		key := ""
		if r.podSelector != nil {
			if reqs, ok := r.podSelector.Requirements(); ok {
				for _, req := range reqs {
					if keyRequired(req.Operator()) {
						key = req.Key()
						break
					}
				}
			}
		}
		if key == "" {
			g.open = true
			continue
		}
		if !seenKey.Has(key) {
			seenKey.Insert(key)
			keys = append(keys, key)
		}
	}
	for _, ns := range namespaces {
		g.nsLens |= lenBit(len(ns))
	}
	for _, k := range keys {
		g.keyLens |= lenBit(len(k))
	}
	if len(namespaces) > shortList {
		lists.namespaceSet = seenNS
	}
	if len(keys) > shortList {
		lists.keySet = seenKey
	}
	lists.nNamespaces = len(namespaces)
	lists.strs = pack(append(namespaces, keys...))
	switch {
	case len(keys) == 1:
		g.key = lists.strs[len(namespaces)]
	case len(keys) > 1 && len(keys) <= shortList:
		lists.keys = lists.strs[len(namespaces):]
	}
	g.lists = lists
	return g
}

// pack returns ss as slices of one buffer, so that scanning them touches as
// few cache lines as the strings need.
func pack(ss []string) []string {
	buf := strings.Join(ss, "")
	out := make([]string, len(ss))
	off := 0
	for i, s := range ss {
		out[i] = buf[off : off+len(s)]
		off += len(s)
	}
	return out
}

// oneKey is mayApply for the common gate, one label key and no namespace
// of the pod's namespace length, at a cost the compiler inlines: PreFilter
// decides most pods without the call. decided is false for other gates
// and pods, which mayApply decides.
func (g *gate) oneKey(pod *v1.Pod) (applies, decided bool) {
	if g.open || g.key == "" || g.nsLens&lenBit(len(pod.Namespace)) != 0 {
		return false, false
	}
	_, applies = pod.Labels[g.key]
	return applies, true
}

// mayApply reports whether a rule may apply to pod; false means none does.
func (g *gate) mayApply(pod *v1.Pod) bool {
	if g.open {
		return true
	}
	if g.nsLens&lenBit(len(pod.Namespace)) != 0 && g.lists.hasNamespace(pod.Namespace) {
		return true
	}
	if g.keyLens == 0 || len(pod.Labels) == 0 {
		return false
	}
	if g.key != "" {
		_, ok := pod.Labels[g.key]
		return ok
	}
	if g.lists.keys != nil {
		for _, k := range g.lists.keys {
			if _, ok := pod.Labels[k]; ok {
				return true
			}
		}
		return false
	}
	for k := range pod.Labels {
		if g.keyLens&lenBit(len(k)) != 0 && g.lists.keySet.Has(k) {
			return true
		}
	}
	return false
}

func (l *gateLists) hasNamespace(ns string) bool {
	if l.namespaceSet != nil {
		return l.namespaceSet.Has(ns)
	}
	for _, s := range l.strs[:l.nNamespaces] {
		if s == ns {
			return true
		}
	}
	return false
}
