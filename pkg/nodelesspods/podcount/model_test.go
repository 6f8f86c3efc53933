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

package podcount

import (
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// This file holds what the table, property, concurrency and fuzz tests share:
// an operation type that can be applied to a Cache, a reference model of the
// documented invariant, and a compact byte encoding of operations.

type opKind uint8

const (
	opReserve opKind = iota
	opUnreserve
	opBind
	opForget
	opForgetNode
	// opObserve calls ObservePod directly.
	opObserve
	// opPodAdd, opPodUpdate and opPodDelete go through PodEventHandler.
	opPodAdd
	opPodUpdate
	opPodDelete
	// opNodeDelete goes through NodeEventHandler.
	opNodeDelete
	numOpKinds
)

// op is one event applied to the cache. Only the fields that matter for its
// kind are set; the constructors below keep the others at their zero value so
// that ops compare equal after an encode/decode round trip.
type op struct {
	kind opKind
	uid  types.UID
	// node is the node of Reserve, Unreserve, Bind and ForgetNode, the
	// spec.nodeName of an observed pod ("" for an unbound pod) and the name
	// of a deleted node.
	node      string
	phase     v1.PodPhase
	counted   bool
	tombstone bool
}

func reserve(uid types.UID, node string) op   { return op{kind: opReserve, uid: uid, node: node} }
func unreserve(uid types.UID, node string) op { return op{kind: opUnreserve, uid: uid, node: node} }
func bind(uid types.UID, node string) op      { return op{kind: opBind, uid: uid, node: node} }
func forget(uid types.UID) op                 { return op{kind: opForget, uid: uid} }
func forgetNode(node string) op               { return op{kind: opForgetNode, node: node} }

// observe is ObservePod(pod, counted) for a pod in phase bound to node ("" for
// not bound yet).
func observe(uid types.UID, node string, phase v1.PodPhase, counted bool) op {
	return op{kind: opObserve, uid: uid, node: node, phase: phase, counted: counted}
}

// podAdd and podUpdate deliver the pod to the pod informer handler; counted
// becomes the label the handler's counts function looks at.
func podAdd(uid types.UID, node string, phase v1.PodPhase, counted bool) op {
	return op{kind: opPodAdd, uid: uid, node: node, phase: phase, counted: counted}
}

func podUpdate(uid types.UID, node string, phase v1.PodPhase, counted bool) op {
	return op{kind: opPodUpdate, uid: uid, node: node, phase: phase, counted: counted}
}

// podDelete deletes a running, counted pod bound to node, directly or through
// a DeletedFinalStateUnknown tombstone.
func podDelete(uid types.UID, node string, tombstone bool) op {
	return op{kind: opPodDelete, uid: uid, node: node, phase: v1.PodRunning, counted: true, tombstone: tombstone}
}

func nodeDelete(node string, tombstone bool) op {
	return op{kind: opNodeDelete, node: node, tombstone: tombstone}
}

func (o op) String() string {
	podArgs := func() string {
		return fmt.Sprintf("%s, node=%q, phase=%s, counted=%t", o.uid, o.node, o.phase, o.counted)
	}
	wrap := func(s string) string {
		if o.tombstone {
			return "tombstone(" + s + ")"
		}
		return s
	}
	switch o.kind {
	case opReserve:
		return fmt.Sprintf("Reserve(%s, %q)", o.uid, o.node)
	case opUnreserve:
		return fmt.Sprintf("Unreserve(%s, %q)", o.uid, o.node)
	case opBind:
		return fmt.Sprintf("Bind(%s, %q)", o.uid, o.node)
	case opForget:
		return fmt.Sprintf("Forget(%s)", o.uid)
	case opForgetNode:
		return fmt.Sprintf("ForgetNode(%q)", o.node)
	case opObserve:
		return "ObservePod(" + podArgs() + ")"
	case opPodAdd:
		return "pod OnAdd(" + podArgs() + ")"
	case opPodUpdate:
		return "pod OnUpdate(" + podArgs() + ")"
	case opPodDelete:
		return "pod OnDelete(" + wrap("pod "+string(o.uid)) + ")"
	case opNodeDelete:
		return "node OnDelete(" + wrap(fmt.Sprintf("node %q", o.node)) + ")"
	}
	return fmt.Sprintf("op(kind=%d)", o.kind)
}

// formatOps numbers ops one per line, for failure messages.
func formatOps(ops []op) string {
	var b strings.Builder
	for i, o := range ops {
		fmt.Fprintf(&b, "  %4d: %v\n", i, o)
	}
	return b.String()
}

// countedLabel marks the pods that countedByLabel, the counts function given
// to PodEventHandler in these tests, counts.
const countedLabel = "podcount.test/counted"

func countedByLabel(pod *v1.Pod) bool {
	return pod.Labels[countedLabel] == "true"
}

func makePod(uid types.UID, node string, phase v1.PodPhase, counted bool) *v1.Pod {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "pod-" + string(uid), UID: uid},
		Spec:       v1.PodSpec{NodeName: node},
		Status:     v1.PodStatus{Phase: phase},
	}
	if counted {
		pod.Labels = map[string]string{countedLabel: "true"}
	}
	return pod
}

func makeNode(name string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

func tombstoneOf(obj metav1.Object) cache.DeletedFinalStateUnknown {
	key := obj.GetName()
	if ns := obj.GetNamespace(); ns != "" {
		key = ns + "/" + key
	}
	return cache.DeletedFinalStateUnknown{Key: key, Obj: obj}
}

func (o op) pod() *v1.Pod { return makePod(o.uid, o.node, o.phase, o.counted) }

// apply applies o to c, through the informer handlers for the handler kinds.
func (o op) apply(c *Cache) {
	switch o.kind {
	case opReserve:
		c.Reserve(o.uid, o.node)
	case opUnreserve:
		c.Unreserve(o.uid, o.node)
	case opBind:
		c.Bind(o.uid, o.node)
	case opForget:
		c.Forget(o.uid)
	case opForgetNode:
		c.ForgetNode(o.node)
	case opObserve:
		c.ObservePod(o.pod(), o.counted)
	case opPodAdd:
		c.PodEventHandler(countedByLabel).OnAdd(o.pod(), false)
	case opPodUpdate:
		// The old object must not matter: give one that disagrees with the new.
		old := makePod(o.uid, "stale-node", v1.PodPending, !o.counted)
		c.PodEventHandler(countedByLabel).OnUpdate(old, o.pod())
	case opPodDelete:
		var obj interface{} = o.pod()
		if o.tombstone {
			obj = tombstoneOf(o.pod())
		}
		c.PodEventHandler(countedByLabel).OnDelete(obj)
	case opNodeDelete:
		var obj interface{} = makeNode(o.node)
		if o.tombstone {
			obj = tombstoneOf(makeNode(o.node))
		}
		c.NodeEventHandler().OnDelete(obj)
	default:
		panic(fmt.Sprintf("unknown op kind %d", o.kind))
	}
}

// model is the reference the cache is checked against. It is written from the
// package documentation, not from cache.go: it keeps the two facts about each
// pod in two independent maps and derives every count by a full scan.
type model struct {
	reservedOn map[types.UID]string
	boundTo    map[types.UID]string
}

func newModel() *model {
	return &model{reservedOn: map[types.UID]string{}, boundTo: map[types.UID]string{}}
}

func (m *model) forgetPod(uid types.UID) {
	delete(m.reservedOn, uid)
	delete(m.boundTo, uid)
}

func (m *model) apply(o op) {
	switch o.kind {
	case opReserve:
		m.reservedOn[o.uid] = o.node
	case opUnreserve:
		if m.reservedOn[o.uid] == o.node {
			delete(m.reservedOn, o.uid)
		}
	case opBind:
		m.boundTo[o.uid] = o.node
	case opForget, opPodDelete:
		m.forgetPod(o.uid)
	case opForgetNode, opNodeDelete:
		for uid, n := range m.reservedOn {
			if n == o.node {
				delete(m.reservedOn, uid)
			}
		}
		for uid, n := range m.boundTo {
			if n == o.node {
				delete(m.boundTo, uid)
			}
		}
	case opObserve, opPodAdd, opPodUpdate:
		terminal := o.phase == v1.PodSucceeded || o.phase == v1.PodFailed
		if !o.counted || terminal {
			m.forgetPod(o.uid)
		} else if o.node != "" {
			m.boundTo[o.uid] = o.node
		}
		// A counted, unbound, running pod changes nothing.
	default:
		panic(fmt.Sprintf("unknown op kind %d", o.kind))
	}
}

// effectiveNode is the binding if there is one, else the reservation.
func (m *model) effectiveNode(uid types.UID) string {
	if n := m.boundTo[uid]; n != "" {
		return n
	}
	return m.reservedOn[uid]
}

func (m *model) uids() map[types.UID]bool {
	all := map[types.UID]bool{}
	for uid := range m.reservedOn {
		all[uid] = true
	}
	for uid := range m.boundTo {
		all[uid] = true
	}
	return all
}

// count is the number of pods whose effective node is node; a pod with no
// effective node is on no node, not on "".
func (m *model) count(node string) int {
	n := 0
	for uid := range m.uids() {
		if eff := m.effectiveNode(uid); eff != "" && eff == node {
			n++
		}
	}
	return n
}

// len is the number of pods on some node.
func (m *model) len() int {
	n := 0
	for uid := range m.uids() {
		if m.effectiveNode(uid) != "" {
			n++
		}
	}
	return n
}

// state is what the public API shows: Count of a set of nodes, and Len.
type state struct {
	Counts map[string]int
	Len    int
}

func cacheState(c *Cache, nodes []string) state {
	s := state{Counts: map[string]int{}, Len: c.Len()}
	for _, n := range nodes {
		s.Counts[n] = c.Count(n)
	}
	return s
}

// modelState counts in one full scan of the model what count and len do.
func modelState(m *model, nodes []string) state {
	s := state{Counts: map[string]int{}}
	for _, n := range nodes {
		s.Counts[n] = 0
	}
	for uid := range m.uids() {
		eff := m.effectiveNode(uid)
		if eff == "" {
			continue
		}
		s.Len++
		if _, ok := s.Counts[eff]; ok {
			s.Counts[eff]++
		}
	}
	return s
}

// checkIndex checks the cache's internal structures against each other: every
// recorded pod has an effective node and is in that node's set and no other,
// no node set is empty, and there is no set for "". It computes the effective
// node itself rather than trusting record.node.
func checkIndex(c *Cache) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var errs []string
	for uid, r := range c.pods {
		eff := r.boundTo
		if eff == "" {
			eff = r.reservedOn
		}
		if eff == "" {
			errs = append(errs, fmt.Sprintf("pod %s kept with an empty record", uid))
			continue
		}
		if _, ok := c.nodes[eff][uid]; !ok {
			errs = append(errs, fmt.Sprintf("pod %s (record %+v) missing from the set of node %q", uid, r, eff))
		}
	}
	inSets := 0
	for node, set := range c.nodes {
		if node == "" {
			errs = append(errs, "a set is kept for node \"\"")
		}
		if len(set) == 0 {
			errs = append(errs, fmt.Sprintf("an empty set is kept for node %q", node))
		}
		for uid := range set {
			inSets++
			r, ok := c.pods[uid]
			if !ok {
				errs = append(errs, fmt.Sprintf("pod %s is in the set of node %q but has no record", uid, node))
				continue
			}
			eff := r.boundTo
			if eff == "" {
				eff = r.reservedOn
			}
			if eff != node {
				errs = append(errs, fmt.Sprintf("pod %s (record %+v) is in the set of node %q", uid, r, node))
			}
		}
	}
	if inSets != len(c.pods) {
		errs = append(errs, fmt.Sprintf("%d entries in node sets for %d recorded pods", inSets, len(c.pods)))
	}
	if len(errs) == 0 {
		return nil
	}
	sort.Strings(errs)
	return fmt.Errorf("inconsistent cache index:\n  %s", strings.Join(errs, "\n  "))
}

// compare returns "" when the cache and the model agree on every node in nodes
// and on Len, and the cache's index is consistent; otherwise a description.
func compare(c *Cache, m *model, nodes []string) string {
	var msgs []string
	want, got := modelState(m, nodes), cacheState(c, nodes)
	// cmp.Diff is slow; only call it to describe a difference.
	if want.Len != got.Len || !maps.Equal(want.Counts, got.Counts) {
		msgs = append(msgs, "cache differs from model (-model +cache):\n"+cmp.Diff(want, got))
	}
	if err := checkIndex(c); err != nil {
		msgs = append(msgs, err.Error())
	}
	return strings.Join(msgs, "\n")
}

// The byte encoding used by FuzzCache. An op is two bytes: the kind modulo
// numOpKinds, then
//
//	bits 0-1: UID index in fuzzUIDs
//	bits 2-3: node index in fuzzNodes, modulo its length
//	bits 4-5: phase index in fuzzPhases
//	bit  6:   counted
//	bit  7:   for pod add/update/observe: the pod is not bound (node "");
//	          for pod and node deletion: the object comes as a tombstone.
var (
	fuzzUIDs   = []types.UID{"a", "b", "c", "d"}
	fuzzNodes  = []string{"n1", "n2", "n3"}
	fuzzPhases = []v1.PodPhase{v1.PodPending, v1.PodRunning, v1.PodSucceeded, v1.PodFailed}
	// fuzzChecked are the nodes whose Count is compared: the alphabet, a
	// node never used, and "".
	fuzzChecked = []string{"n1", "n2", "n3", "unknown", ""}
)

const (
	countedBit = 1 << 6
	flagBit    = 1 << 7
)

func decodeOps(data []byte) []op {
	ops := make([]op, 0, len(data)/2)
	for i := 0; i+1 < len(data); i += 2 {
		kind := opKind(data[i] % byte(numOpKinds))
		b := data[i+1]
		uid := fuzzUIDs[b&3]
		node := fuzzNodes[int(b>>2&3)%len(fuzzNodes)]
		phase := fuzzPhases[b>>4&3]
		counted := b&countedBit != 0
		flag := b&flagBit != 0
		var o op
		switch kind {
		case opReserve:
			o = reserve(uid, node)
		case opUnreserve:
			o = unreserve(uid, node)
		case opBind:
			o = bind(uid, node)
		case opForget:
			o = forget(uid)
		case opForgetNode:
			o = forgetNode(node)
		case opObserve, opPodAdd, opPodUpdate:
			if flag {
				node = ""
			}
			o = op{kind: kind, uid: uid, node: node, phase: phase, counted: counted}
		case opPodDelete:
			o = podDelete(uid, node, flag)
		case opNodeDelete:
			o = nodeDelete(node, flag)
		}
		ops = append(ops, o)
	}
	return ops
}

// encodeOps is the inverse of decodeOps for ops built with the constructors
// over the fuzz alphabet. It panics on an op outside that alphabet.
func encodeOps(ops []op) []byte {
	index := func(what string, s []string, v string) byte {
		for i, x := range s {
			if x == v {
				return byte(i)
			}
		}
		panic(fmt.Sprintf("%s %q is not in the fuzz alphabet %q", what, v, s))
	}
	uids := make([]string, len(fuzzUIDs))
	for i, u := range fuzzUIDs {
		uids[i] = string(u)
	}
	phases := make([]string, len(fuzzPhases))
	for i, p := range fuzzPhases {
		phases[i] = string(p)
	}
	var data []byte
	for _, o := range ops {
		var b byte
		switch o.kind {
		case opReserve, opUnreserve, opBind:
			b = index("uid", uids, string(o.uid)) | index("node", fuzzNodes, o.node)<<2
		case opForget:
			b = index("uid", uids, string(o.uid))
		case opForgetNode:
			b = index("node", fuzzNodes, o.node) << 2
		case opObserve, opPodAdd, opPodUpdate:
			b = index("uid", uids, string(o.uid)) | index("phase", phases, string(o.phase))<<4
			if o.node == "" {
				b |= flagBit
			} else {
				b |= index("node", fuzzNodes, o.node) << 2
			}
			if o.counted {
				b |= countedBit
			}
		case opPodDelete:
			b = index("uid", uids, string(o.uid)) | index("node", fuzzNodes, o.node)<<2 |
				index("phase", phases, string(o.phase))<<4
			if o.counted {
				b |= countedBit
			}
			if o.tombstone {
				b |= flagBit
			}
		case opNodeDelete:
			b = index("node", fuzzNodes, o.node) << 2
			if o.tombstone {
				b |= flagBit
			}
		default:
			panic(fmt.Sprintf("unknown op kind %d", o.kind))
		}
		data = append(data, byte(o.kind), b)
	}
	return data
}
