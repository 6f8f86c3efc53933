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
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

const (
	running   = v1.PodRunning
	pending   = v1.PodPending
	succeeded = v1.PodSucceeded
	failed    = v1.PodFailed
)

// checkedNodes are the nodes whose Count every table case looks at: the ones
// the cases use, one they never use, and "".
var checkedNodes = []string{"n1", "n2", "n3", "unknown", ""}

// gotCounts returns Count of every checked node, leaving out zeros so that a
// case only lists the nodes that hold pods.
func gotCounts(c *Cache) map[string]int {
	got := map[string]int{}
	for _, n := range checkedNodes {
		if cnt := c.Count(n); cnt != 0 {
			got[n] = cnt
		}
	}
	return got
}

// cacheTests is shared with FuzzCache, which uses every case as a seed: keep
// the ops within the fuzz alphabet (UIDs a-d, nodes n1-n3).
var cacheTests = []struct {
	name    string
	ops     []op
	want    map[string]int
	wantLen int
}{
	{
		name: "empty cache",
		want: map[string]int{},
	},
	{
		name:    "reserve",
		ops:     []op{reserve("a", "n1")},
		want:    map[string]int{"n1": 1},
		wantLen: 1,
	},
	{
		name: "unreserve without reserve",
		ops:  []op{unreserve("a", "n1")},
		want: map[string]int{},
	},
	{
		name:    "reserve twice on the same node counts once",
		ops:     []op{reserve("a", "n1"), reserve("a", "n1")},
		want:    map[string]int{"n1": 1},
		wantLen: 1,
	},
	{
		name:    "reserve again on another node moves the reservation",
		ops:     []op{reserve("a", "n1"), reserve("a", "n2")},
		want:    map[string]int{"n2": 1},
		wantLen: 1,
	},
	{
		name:    "informer confirming a reserved pod on the same node counts it once",
		ops:     []op{reserve("a", "n1"), observe("a", "n1", running, true)},
		want:    map[string]int{"n1": 1},
		wantLen: 1,
	},
	{
		name:    "informer add then update of a reserved pod counts it once",
		ops:     []op{reserve("a", "n1"), podAdd("a", "n1", running, true), podUpdate("a", "n1", running, true)},
		want:    map[string]int{"n1": 1},
		wantLen: 1,
	},
	{
		name:    "bound pending pod counts",
		ops:     []op{observe("a", "n1", pending, true)},
		want:    map[string]int{"n1": 1},
		wantLen: 1,
	},
	{
		name:    "reserve, unreserve, reserve again",
		ops:     []op{reserve("a", "n1"), unreserve("a", "n1"), reserve("a", "n1")},
		want:    map[string]int{"n1": 1},
		wantLen: 1,
	},
	{
		name: "reserve, unreserve twice",
		ops:  []op{reserve("a", "n1"), unreserve("a", "n1"), unreserve("a", "n1")},
		want: map[string]int{},
	},
	{
		name:    "unreserve on another node than reserved is a no-op",
		ops:     []op{reserve("a", "n1"), unreserve("a", "n2")},
		want:    map[string]int{"n1": 1},
		wantLen: 1,
	},
	{
		name:    "unreserve of the old node after moving the reservation is a no-op",
		ops:     []op{reserve("a", "n1"), reserve("a", "n2"), unreserve("a", "n1")},
		want:    map[string]int{"n2": 1},
		wantLen: 1,
	},
	{
		name:    "unreserve after the informer saw the binding keeps the pod",
		ops:     []op{reserve("a", "n1"), observe("a", "n1", running, true), unreserve("a", "n1")},
		want:    map[string]int{"n1": 1},
		wantLen: 1,
	},
	{
		name:    "binding seen before reserve, then unreserve, keeps the pod",
		ops:     []op{podAdd("a", "n1", running, true), reserve("a", "n1"), unreserve("a", "n1")},
		want:    map[string]int{"n1": 1},
		wantLen: 1,
	},
	{
		name: "pod deleted before the informer saw its binding leaves",
		ops:  []op{reserve("a", "n1"), forget("a")},
		want: map[string]int{},
	},
	{
		name: "pod deleted before its binding was seen, then late unreserve",
		ops:  []op{reserve("a", "n1"), forget("a"), unreserve("a", "n1")},
		want: map[string]int{},
	},
	{
		name: "informer deletion of a reserved pod leaves",
		ops:  []op{reserve("a", "n1"), podDelete("a", "n1", false)},
		want: map[string]int{},
	},
	{
		name: "informer deletion tombstone of a bound pod leaves",
		ops:  []op{podAdd("a", "n1", running, true), podDelete("a", "n1", true)},
		want: map[string]int{},
	},
	{
		name: "forget twice, and forget of an unknown pod",
		ops:  []op{reserve("a", "n1"), forget("a"), forget("a"), forget("b")},
		want: map[string]int{},
	},
	{
		name: "succeeded bound pod removes it",
		ops:  []op{reserve("a", "n1"), observe("a", "n1", running, true), observe("a", "n1", succeeded, true)},
		want: map[string]int{},
	},
	{
		name: "failed bound pod removes it",
		ops:  []op{reserve("a", "n1"), podAdd("a", "n1", running, true), podUpdate("a", "n1", failed, true)},
		want: map[string]int{},
	},
	{
		name: "terminal pod removes a reservation it still has",
		ops:  []op{reserve("a", "n1"), observe("a", "", failed, true)},
		want: map[string]int{},
	},
	{
		name: "terminal pod is never counted",
		ops:  []op{observe("a", "n1", succeeded, true), podAdd("b", "n1", failed, true)},
		want: map[string]int{},
	},
	{
		name: "pod that stops matching leaves",
		ops:  []op{podAdd("a", "n1", running, true), podUpdate("a", "n1", running, false)},
		want: map[string]int{},
	},
	{
		name: "pod that stops matching loses its reservation",
		ops:  []op{reserve("a", "n1"), observe("a", "", pending, false)},
		want: map[string]int{},
	},
	{
		name: "pod that does not match is never counted",
		ops:  []op{observe("a", "n1", running, false), podAdd("b", "n2", running, false)},
		want: map[string]int{},
	},
	{
		name: "unbound pod without reservation is not counted",
		ops:  []op{observe("a", "", pending, true), podAdd("b", "", pending, true)},
		want: map[string]int{},
	},
	{
		name:    "unbound pod keeps its reservation",
		ops:     []op{reserve("a", "n1"), podAdd("a", "", pending, true), podUpdate("a", "", pending, true)},
		want:    map[string]int{"n1": 1},
		wantLen: 1,
	},
	{
		name:    "bound pod reserved on another node: binding wins",
		ops:     []op{reserve("a", "n1"), observe("a", "n2", running, true)},
		want:    map[string]int{"n2": 1},
		wantLen: 1,
	},
	{
		name:    "bound pod reserved on another node afterwards: binding wins",
		ops:     []op{bind("a", "n2"), reserve("a", "n1")},
		want:    map[string]int{"n2": 1},
		wantLen: 1,
	},
	{
		name:    "binding wins, then unreserve of the reserved node keeps the binding",
		ops:     []op{reserve("a", "n1"), bind("a", "n2"), unreserve("a", "n1")},
		want:    map[string]int{"n2": 1},
		wantLen: 1,
	},
	{
		name:    "unreserve of the bound node does not drop a reservation elsewhere",
		ops:     []op{reserve("a", "n1"), bind("a", "n2"), unreserve("a", "n2")},
		want:    map[string]int{"n2": 1},
		wantLen: 1,
	},
	{
		name:    "bind twice, and bind to another node moves the pod",
		ops:     []op{bind("a", "n1"), bind("a", "n1"), bind("a", "n2")},
		want:    map[string]int{"n2": 1},
		wantLen: 1,
	},
	{
		name:    "deleting the bound node falls back to the reservation",
		ops:     []op{reserve("a", "n1"), bind("a", "n2"), forgetNode("n2")},
		want:    map[string]int{"n1": 1},
		wantLen: 1,
	},
	{
		name: "forget node removes bindings and reservations on it and keeps others",
		ops: []op{
			reserve("a", "n1"),
			podAdd("b", "n1", running, true),
			reserve("c", "n2"),
			reserve("d", "n1"), bind("d", "n3"),
			forgetNode("n1"),
		},
		want:    map[string]int{"n2": 1, "n3": 1},
		wantLen: 2,
	},
	{
		name: "forget node drops a reservation hidden behind a binding elsewhere",
		ops: []op{
			reserve("d", "n1"), bind("d", "n3"),
			forgetNode("n1"), forgetNode("n3"),
		},
		want: map[string]int{},
	},
	{
		name: "forget node twice",
		ops: []op{
			reserve("a", "n1"), bind("b", "n1"), reserve("c", "n2"),
			forgetNode("n1"), nodeDelete("n1", false),
		},
		want:    map[string]int{"n2": 1},
		wantLen: 1,
	},
	{
		name:    "forget node of nodes without pods",
		ops:     []op{reserve("a", "n1"), forgetNode("n2"), nodeDelete("n3", true)},
		want:    map[string]int{"n1": 1},
		wantLen: 1,
	},
	{
		name:    "reserve on a deleted node works again",
		ops:     []op{reserve("a", "n1"), forgetNode("n1"), reserve("a", "n1"), reserve("b", "n1")},
		want:    map[string]int{"n1": 2},
		wantLen: 2,
	},
	{
		name: "several pods per node",
		ops: []op{
			reserve("a", "n1"), reserve("b", "n1"), reserve("c", "n1"),
			podAdd("d", "n1", running, true),
			unreserve("b", "n1"),
			reserve("b", "n2"),
			observe("c", "n2", running, true),
		},
		want:    map[string]int{"n1": 2, "n2": 2},
		wantLen: 4,
	},
	{
		name: "count of an unknown node is 0",
		ops: []op{
			reserve("a", "n1"), bind("b", "n2"), podAdd("c", "n3", running, true),
		},
		// checkedNodes includes "unknown" and "": absent from want means 0.
		want:    map[string]int{"n1": 1, "n2": 1, "n3": 1},
		wantLen: 3,
	},
}

func TestCache(t *testing.T) {
	for _, tc := range cacheTests {
		t.Run(tc.name, func(t *testing.T) {
			c := New()
			for _, o := range tc.ops {
				o.apply(c)
			}
			if diff := cmp.Diff(tc.want, gotCounts(c)); diff != "" {
				t.Errorf("Count per node (-want +got):\n%s\nops:\n%s", diff, formatOps(tc.ops))
			}
			if got := c.Len(); got != tc.wantLen {
				t.Errorf("Len() = %d, want %d\nops:\n%s", got, tc.wantLen, formatOps(tc.ops))
			}
			if err := checkIndex(c); err != nil {
				t.Errorf("%v\nops:\n%s", err, formatOps(tc.ops))
			}
			// Keep the table honest: the model must agree with every case.
			m := newModel()
			for _, o := range tc.ops {
				m.apply(o)
			}
			if diff := cmp.Diff(modelState(m, checkedNodes), cacheState(c, checkedNodes)); diff != "" {
				t.Errorf("cache differs from model (-model +cache):\n%s", diff)
			}
		})
	}
}

// handlerEvent is one call to an informer handler.
type handlerEvent struct {
	// nodeHandler selects NodeEventHandler; otherwise PodEventHandler.
	nodeHandler bool
	verb        string // "add", "update" or "delete"
	oldObj, obj interface{}
}

func onPodAdd(obj interface{}) handlerEvent { return handlerEvent{verb: "add", obj: obj} }
func onPodUpdate(oldObj, obj interface{}) handlerEvent {
	return handlerEvent{verb: "update", oldObj: oldObj, obj: obj}
}
func onPodDelete(obj interface{}) handlerEvent { return handlerEvent{verb: "delete", obj: obj} }
func onNodeAdd(obj interface{}) handlerEvent {
	return handlerEvent{nodeHandler: true, verb: "add", obj: obj}
}
func onNodeUpdate(oldObj, obj interface{}) handlerEvent {
	return handlerEvent{nodeHandler: true, verb: "update", oldObj: oldObj, obj: obj}
}
func onNodeDelete(obj interface{}) handlerEvent {
	return handlerEvent{nodeHandler: true, verb: "delete", obj: obj}
}

func TestEventHandlers(t *testing.T) {
	pod := makePod
	// A pod whose name and UID are those of a node, to check that the node
	// handler does not mistake it for the node.
	podNamedN1 := makePod("n1", "n1", running, true)
	podNamedN1.Name = "n1"

	tests := []struct {
		name    string
		setup   []op
		events  []handlerEvent
		want    map[string]int
		wantLen int
	}{
		{
			name:    "add of a bound counted pod",
			events:  []handlerEvent{onPodAdd(pod("a", "n1", running, true))},
			want:    map[string]int{"n1": 1},
			wantLen: 1,
		},
		{
			name:   "add of an unbound pod records nothing",
			events: []handlerEvent{onPodAdd(pod("a", "", pending, true))},
			want:   map[string]int{},
		},
		{
			name:   "add of a pod the counts function rejects records nothing",
			events: []handlerEvent{onPodAdd(pod("a", "n1", running, false))},
			want:   map[string]int{},
		},
		{
			name:    "update binding a reserved pod counts it once",
			setup:   []op{reserve("a", "n1")},
			events:  []handlerEvent{onPodUpdate(pod("a", "", pending, true), pod("a", "n1", running, true))},
			want:    map[string]int{"n1": 1},
			wantLen: 1,
		},
		{
			name:    "update uses the new object, not the old one",
			events:  []handlerEvent{onPodUpdate(pod("a", "n2", running, true), pod("a", "n1", running, true))},
			want:    map[string]int{"n1": 1},
			wantLen: 1,
		},
		{
			name:    "update with an old object of the wrong type still applies the new one",
			events:  []handlerEvent{onPodUpdate("not a pod", pod("a", "n1", running, true))},
			want:    map[string]int{"n1": 1},
			wantLen: 1,
		},
		{
			name:  "update to succeeded removes",
			setup: []op{reserve("a", "n1"), bind("a", "n1")},
			events: []handlerEvent{
				onPodUpdate(pod("a", "n1", running, true), pod("a", "n1", succeeded, true)),
			},
			want: map[string]int{},
		},
		{
			name:   "update to failed removes",
			setup:  []op{bind("a", "n1")},
			events: []handlerEvent{onPodUpdate(pod("a", "n1", running, true), pod("a", "n1", failed, true))},
			want:   map[string]int{},
		},
		{
			name:   "update to a pod the counts function rejects removes",
			setup:  []op{reserve("a", "n2"), bind("a", "n1")},
			events: []handlerEvent{onPodUpdate(pod("a", "n1", running, true), pod("a", "n1", running, false))},
			want:   map[string]int{},
		},
		{
			name:    "delete of a pod",
			setup:   []op{bind("a", "n1"), bind("b", "n1")},
			events:  []handlerEvent{onPodDelete(pod("a", "n1", running, true))},
			want:    map[string]int{"n1": 1},
			wantLen: 1,
		},
		{
			name:   "delete of a reserved pod never seen bound",
			setup:  []op{reserve("a", "n1")},
			events: []handlerEvent{onPodDelete(pod("a", "", pending, true))},
			want:   map[string]int{},
		},
		{
			name:   "delete of a pod the counts function rejects still removes it",
			setup:  []op{bind("a", "n1")},
			events: []handlerEvent{onPodDelete(pod("a", "n1", running, false))},
			want:   map[string]int{},
		},
		{
			name:    "delete tombstone of a pod",
			setup:   []op{bind("a", "n1"), reserve("b", "n1")},
			events:  []handlerEvent{onPodDelete(tombstoneOf(pod("b", "", pending, true)))},
			want:    map[string]int{"n1": 1},
			wantLen: 1,
		},
		{
			name:  "pod handler ignores objects of the wrong type",
			setup: []op{reserve("a", "n1"), bind("n1", "n1")},
			events: []handlerEvent{
				onPodAdd(makeNode("n1")),
				onPodAdd("a"),
				onPodAdd(nil),
				onPodAdd(tombstoneOf(pod("a", "n2", running, true))),
				onPodUpdate(pod("a", "n1", running, true), makeNode("n1")),
				onPodUpdate(nil, nil),
				onPodDelete(makeNode("n1")),
				onPodDelete("a"),
				onPodDelete(nil),
				onPodDelete(*pod("a", "n1", running, true)),
				onPodDelete(&cache.DeletedFinalStateUnknown{Key: "default/pod-a", Obj: pod("a", "n1", running, true)}),
				onPodDelete(tombstoneOf(makeNode("n1"))),
				onPodDelete(cache.DeletedFinalStateUnknown{Key: "default/pod-a"}),
			},
			want:    map[string]int{"n1": 2},
			wantLen: 2,
		},
		{
			name:    "node delete removes bindings and reservations on the node only",
			setup:   []op{reserve("a", "n1"), bind("b", "n1"), reserve("c", "n2"), reserve("d", "n1"), bind("d", "n3")},
			events:  []handlerEvent{onNodeDelete(makeNode("n1"))},
			want:    map[string]int{"n2": 1, "n3": 1},
			wantLen: 2,
		},
		{
			name:    "node delete tombstone",
			setup:   []op{reserve("a", "n1"), bind("b", "n2")},
			events:  []handlerEvent{onNodeDelete(tombstoneOf(makeNode("n2")))},
			want:    map[string]int{"n1": 1},
			wantLen: 1,
		},
		{
			name:    "node delete twice, and of an unknown node",
			setup:   []op{reserve("a", "n1"), bind("b", "n2")},
			events:  []handlerEvent{onNodeDelete(makeNode("n2")), onNodeDelete(makeNode("n2")), onNodeDelete(makeNode("n3"))},
			want:    map[string]int{"n1": 1},
			wantLen: 1,
		},
		{
			name:  "node handler ignores objects of the wrong type, adds and updates",
			setup: []op{reserve("a", "n1"), bind("n1", "n1")},
			events: []handlerEvent{
				onNodeAdd(makeNode("n1")),
				onNodeUpdate(makeNode("n1"), makeNode("n1")),
				onNodeDelete(podNamedN1),
				onNodeDelete(tombstoneOf(podNamedN1)),
				onNodeDelete("n1"),
				onNodeDelete(nil),
				onNodeDelete(*makeNode("n1")),
				onNodeDelete(&cache.DeletedFinalStateUnknown{Key: "n1", Obj: makeNode("n1")}),
				onNodeDelete(cache.DeletedFinalStateUnknown{Key: "n1"}),
			},
			want:    map[string]int{"n1": 2},
			wantLen: 2,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := New()
			for _, o := range tc.setup {
				o.apply(c)
			}
			podHandler := c.PodEventHandler(countedByLabel)
			nodeHandler := c.NodeEventHandler()
			for i, ev := range tc.events {
				h := podHandler
				if ev.nodeHandler {
					h = nodeHandler
				}
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Fatalf("event %d (%s %#v) panicked: %v", i, ev.verb, ev.obj, r)
						}
					}()
					switch ev.verb {
					case "add":
						h.OnAdd(ev.obj, false)
					case "update":
						h.OnUpdate(ev.oldObj, ev.obj)
					case "delete":
						h.OnDelete(ev.obj)
					default:
						t.Fatalf("bad verb %q", ev.verb)
					}
				}()
			}
			if diff := cmp.Diff(tc.want, gotCounts(c)); diff != "" {
				t.Errorf("Count per node (-want +got):\n%s", diff)
			}
			if got := c.Len(); got != tc.wantLen {
				t.Errorf("Len() = %d, want %d", got, tc.wantLen)
			}
			if err := checkIndex(c); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestCacheConcurrent runs Reserve, Unreserve, Bind, Forget, ForgetNode, Count
// and Len from many goroutines at once (meant for -race). Shared pods are
// touched by every goroutine in random order, so their end state is unknown
// and a deterministic phase settles them afterwards. Each goroutine also owns
// pods that only it touches, on the same nodes; it mirrors its ops on them in
// its own model, so their end state is known whatever the interleaving.
func TestCacheConcurrent(t *testing.T) {
	const (
		workers    = 8
		iterations = 3000
		ownPerW    = 4
		// scratch holds only shared pods, so ForgetNode on it may run
		// concurrently without touching the owned pods.
		scratch = "scratch"
	)
	nodes := []string{"n0", "n1", "n2", "n3"}
	sharedNodes := append([]string{scratch}, nodes...)
	var shared []types.UID
	for i := range 6 {
		shared = append(shared, types.UID(fmt.Sprintf("shared-%d", i)))
	}
	checked := append([]string{"unknown"}, sharedNodes...)

	c := New()
	models := make([]*model, workers)
	owned := make([][]types.UID, workers)
	var wg sync.WaitGroup
	for w := range workers {
		models[w] = newModel()
		for j := range ownPerW {
			owned[w] = append(owned[w], types.UID(fmt.Sprintf("w%d-%d", w, j)))
		}
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 0x5eed))
			m := models[w]
			for range iterations {
				uid := shared[r.IntN(len(shared))]
				node := sharedNodes[r.IntN(len(sharedNodes))]
				switch r.IntN(7) {
				case 0:
					c.Reserve(uid, node)
				case 1:
					c.Unreserve(uid, node)
				case 2:
					c.Bind(uid, node)
				case 3:
					if r.IntN(4) == 0 {
						c.Forget(uid)
					} else {
						c.ForgetNode(scratch)
					}
				case 4:
					if n := c.Count(node); n < 0 || n > len(shared)+workers*ownPerW {
						t.Errorf("Count(%q) = %d during the concurrent phase", node, n)
					}
					if n := c.Len(); n < 0 || n > len(shared)+workers*ownPerW {
						t.Errorf("Len() = %d during the concurrent phase", n)
					}
				default:
					own := owned[w][r.IntN(ownPerW)]
					ownNode := nodes[r.IntN(len(nodes))]
					var o op
					switch r.IntN(8) {
					case 0, 1, 2:
						o = reserve(own, ownNode)
					case 3, 4, 5:
						o = unreserve(own, ownNode)
					case 6:
						o = bind(own, ownNode)
					default:
						o = forget(own)
					}
					o.apply(c)
					m.apply(o)
				}
			}
		})
	}
	wg.Wait()
	if err := checkIndex(c); err != nil {
		t.Fatalf("after the concurrent phase: %v", err)
	}

	// Every owned pod has exactly the record its goroutine's model says.
	for w, m := range models {
		for _, uid := range owned[w] {
			want := record{boundTo: m.boundTo[uid], reservedOn: m.reservedOn[uid]}
			got := c.pods[uid]
			if got != want {
				t.Errorf("after the concurrent phase, pod %s has record %+v, want %+v", uid, got, want)
			}
		}
	}

	// want merges the models of the owned pods, plus extra pods per node.
	want := func(extra map[string]int) state {
		s := state{Counts: map[string]int{}}
		for _, n := range checked {
			s.Counts[n] = extra[n]
			s.Len += extra[n]
			for _, m := range models {
				s.Counts[n] += m.count(n)
			}
		}
		for _, m := range models {
			s.Len += m.len()
		}
		return s
	}

	// Binding wins over any reservation the shared pods were left with.
	for _, uid := range shared {
		c.Bind(uid, "n3")
	}
	if diff := cmp.Diff(want(map[string]int{"n3": len(shared)}), cacheState(c, checked)); diff != "" {
		t.Fatalf("after binding the shared pods to n3 (-want +got):\n%s", diff)
	}
	for _, uid := range shared {
		c.Forget(uid)
	}
	if diff := cmp.Diff(want(nil), cacheState(c, checked)); diff != "" {
		t.Fatalf("after forgetting the shared pods (-want +got):\n%s", diff)
	}
	// Deleting the nodes one by one brings out the reservations hidden
	// behind bindings, so that they are compared too.
	for _, n := range nodes {
		c.ForgetNode(n)
		for _, m := range models {
			m.apply(forgetNode(n))
		}
		if diff := cmp.Diff(want(nil), cacheState(c, checked)); diff != "" {
			t.Fatalf("after ForgetNode(%q) (-want +got):\n%s", n, diff)
		}
		if err := checkIndex(c); err != nil {
			t.Fatalf("after ForgetNode(%q): %v", n, err)
		}
	}
	for _, uids := range owned {
		for _, uid := range uids {
			c.Forget(uid)
		}
	}
	empty := state{Counts: map[string]int{}}
	for _, n := range checked {
		empty.Counts[n] = 0
	}
	if diff := cmp.Diff(empty, cacheState(c, checked)); diff != "" {
		t.Fatalf("after forgetting every pod (-want +got):\n%s", diff)
	}
	if len(c.pods) != 0 || len(c.nodes) != 0 {
		t.Errorf("after forgetting every pod: %d records and %d node sets kept, want none", len(c.pods), len(c.nodes))
	}
}
