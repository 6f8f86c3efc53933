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
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// The property and fuzz tests drive three nodes through the changes the
// scheduler makes to NodeInfos, in any order, and check the invariant after
// every step: Count equals a scan of the NodeInfo (model).

const fuzzNodes = 3

// Each byte of an input is one step: the low two bits pick the node (3 is
// taken as 0), the rest the change.
const (
	stepAdd       = iota // the cache adds a pod: new generation
	stepRemove           // the cache removes the oldest pod: new generation
	stepAssume           // pod-group AssumePod: one pod more, same generation
	stepForget           // pod-group ForgetPod: the newest pod goes, same generation
	stepSwap             // same generation and pod count, one pod replaced, then Invalidate
	stepRecreate         // node deleted and re-created under its name, holding its pods
	stepTerminate        // the cache updates a pod to Succeeded: new generation
	stepCount            // Count only
	numSteps
)

type fuzzWorld struct {
	logger klog.Logger
	cache  *Cache
	infos  [fuzzNodes]*framework.NodeInfo
	next   int
}

func newFuzzWorld(logger klog.Logger) *fuzzWorld {
	w := &fuzzWorld{logger: logger, cache: New(countedByLabel, nil)}
	for i := range w.infos {
		w.infos[i] = makeNodeInfo(fmt.Sprintf("n%d", i))
	}
	return w
}

func (w *fuzzWorld) newPod(node string) *v1.Pod {
	w.next++
	return makePod(fmt.Sprintf("p%d", w.next), node, v1.PodRunning, w.next%3 != 0)
}

// step applies b and returns an error when the invariant breaks.
func (w *fuzzWorld) step(b byte) error {
	i := int(b&3) % fuzzNodes
	ni := w.infos[i]
	name := ni.Node().Name
	generation := ni.Generation
	switch int(b>>2) % numSteps {
	case stepAdd:
		ni.AddPod(w.newPod(name))
	case stepRemove:
		if len(ni.Pods) > 0 {
			if err := ni.RemovePod(w.logger, ni.Pods[0].GetPod()); err != nil {
				return err
			}
		}
	case stepAssume:
		ni.AddPod(w.newPod(name))
		ni.Generation = generation
	case stepForget:
		if len(ni.Pods) > 0 {
			if err := ni.RemovePod(w.logger, ni.Pods[len(ni.Pods)-1].GetPod()); err != nil {
				return err
			}
			ni.Generation = generation
		}
	case stepSwap:
		if len(ni.Pods) > 0 {
			if err := ni.RemovePod(w.logger, ni.Pods[0].GetPod()); err != nil {
				return err
			}
			ni.AddPod(w.newPod(name))
			ni.Generation = generation
			w.cache.Invalidate(name)
		}
	case stepRecreate:
		var pods []*v1.Pod
		for _, pi := range ni.Pods {
			pods = append(pods, pi.GetPod())
		}
		w.infos[i] = makeNodeInfo(name, pods...)
	case stepTerminate:
		if len(ni.Pods) > 0 {
			old := ni.Pods[0].GetPod()
			done := old.DeepCopy()
			done.Status.Phase = v1.PodSucceeded
			if err := ni.RemovePod(w.logger, old); err != nil {
				return err
			}
			ni.AddPod(done)
		}
	case stepCount:
	}
	for _, ni := range w.infos {
		if got, want := w.cache.Count(ni), model(ni); got != want {
			return fmt.Errorf("%s: Count = %d, want %d", ni.Node().Name, got, want)
		}
	}
	return nil
}

// FuzzCache applies each input's steps and fails when the cache and the model
// disagree. The seeds run in every `go test`.
func FuzzCache(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{stepAdd << 2, stepAdd << 2, stepAssume << 2, stepForget << 2, stepCount << 2})
	f.Add([]byte{stepAdd<<2 | 1, stepAssume<<2 | 1, stepSwap<<2 | 1, stepRecreate<<2 | 1, stepTerminate<<2 | 1})
	f.Add([]byte{stepAssume << 2, stepAssume << 2, stepForget << 2, stepRemove << 2, stepForget << 2, stepAssume<<2 | 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		logger, _ := ktesting.NewTestContext(t)
		w := newFuzzWorld(logger)
		for n, b := range data {
			if err := w.step(b); err != nil {
				t.Fatalf("step %d (%#x): %v", n, b, err)
			}
		}
	})
}

// TestCacheMatchesModel runs long random sequences of steps.
func TestCacheMatchesModel(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			r := rand.New(rand.NewPCG(seed, 0))
			w := newFuzzWorld(logger)
			for n := range 4000 {
				b := byte(r.UintN(256))
				if err := w.step(b); err != nil {
					t.Fatalf("step %d (%#x): %v", n, b, err)
				}
			}
		})
	}
}
