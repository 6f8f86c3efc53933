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

package match

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/sets"
)

// gate is a necessary condition for a rule to apply to a pod, compiled once
// from the rules: the pod's namespace is one that a rule lists, or the pod
// carries a label key that a rule's podSelector cannot match without.
// Passing it says nothing; failing it means that no rule applies.
//
// It exists for the pods no rule selects, most pods of most clusters: they
// are decided from the pod's namespace and label keys, without evaluating
// every rule's selectors or reading the namespace lister.
type gate struct {
	// nsLens and keyLens have bit lenBit(n) set when a namespace, or a key,
	// is n bytes long: most pods fail the gate on these masks alone, without
	// comparing a string.
	nsLens, keyLens uint64
	// key is the label key when there is only one.
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
	// strs holds the namespaces, then the keys; namespaceSet replaces the
	// namespaces when there are many. keys are the keys when there are two
	// to shortList of them, looked up one by one in the pod's labels, which
	// costs less than iterating over the labels. keySet is set when there
	// are more.
	strs         []string
	nNamespaces  int
	namespaceSet sets.Set[string]
	keys         []string
	keySet       sets.Set[string]
}

func lenBit(n int) uint64 { return 1 << min(n, 63) }

// shortList is how many strings a linear scan compares before a set lookup
// is cheaper: comparing strings compares their lengths first.
const shortList = 8

// keyRequired reports whether a requirement fails on a pod without its key.
func keyRequired(op selection.Operator) bool {
	switch op {
	case selection.In, selection.Equals, selection.DoubleEquals, selection.Exists, selection.GreaterThan, selection.LessThan:
		return true
	}
	return false
}

func newGate(rules []*Rule) gate {
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
	lists.strs = append(namespaces, keys...)
	switch {
	case len(keys) == 1:
		g.key = lists.strs[len(namespaces)]
	case len(keys) > 1 && len(keys) <= shortList:
		lists.keys = lists.strs[len(namespaces):]
	}
	g.lists = lists
	return g
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
