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

package policyevictor

import (
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"
)

// ledger holds the evictions admitted recently, each as the pod it will
// add to its target node. Within a cycle the informers still show an
// evicted pod on its old node and its replacement nowhere, so without it
// two pods could both be sent to the one free slot.
type ledger struct {
	ttl time.Duration
	mu  sync.Mutex
	// byPod is keyed by the evicted pod, so a pod checked twice counts once.
	byPod map[types.UID]admitted
}

type admitted struct {
	pod *v1.Pod // a copy of the evicted pod, on its target node
	at  time.Time
}

func newLedger(ttl time.Duration) *ledger {
	return &ledger{ttl: ttl, byPod: map[types.UID]admitted{}}
}

// admit records pod as bound for node.
func (l *ledger) admit(pod *v1.Pod, node string, now time.Time) {
	p := pod.DeepCopy()
	p.Spec.NodeName = node
	l.mu.Lock()
	defer l.mu.Unlock()
	l.byPod[pod.UID] = admitted{pod: p, at: now}
}

// podsOn returns the pods admitted to node that have not expired at now,
// except self; it drops the expired ones.
func (l *ledger) podsOn(node string, self types.UID, now time.Time) []*v1.Pod {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*v1.Pod
	for uid, a := range l.byPod {
		switch {
		case now.Sub(a.at) >= l.ttl:
			delete(l.byPod, uid)
		case uid != self && a.pod.Spec.NodeName == node:
			out = append(out, a.pod)
		}
	}
	return out
}

// withAdmitted returns pods on nodes as get lists them plus the admitted
// ones, so that NodeFit counts them against the node's free capacity.
func (l *ledger) withAdmitted(get podutil.GetPodsAssignedToNodeFunc, self types.UID, now time.Time) podutil.GetPodsAssignedToNodeFunc {
	return func(node string, filter podutil.FilterFunc) ([]*v1.Pod, error) {
		pods, err := get(node, filter)
		if err != nil {
			return nil, err
		}
		// Full slice expression: never write into get's backing array.
		pods = pods[:len(pods):len(pods)]
		for _, p := range l.podsOn(node, self, now) {
			if filter == nil || filter(p) {
				pods = append(pods, p)
			}
		}
		return pods, nil
	}
}
