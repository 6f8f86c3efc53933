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

package settle

import (
	"context"
	"fmt"
	"time"

	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// Autoscaler is what Settle reads of an autoscaler that adds nodes for
// unschedulable pods (Karpenter) to tell when it is done with them.
type Autoscaler interface {
	// Name names it in progress lines.
	Name() string
	// Provisioning is its state now.
	Provisioning(ctx context.Context) (Provisioning, error)
}

// Provisioning is an autoscaler's state at one look.
type Provisioning struct {
	// Claims are the nodes it asked for and did not remove (Karpenter's
	// NodeClaims not being deleted); Launching those of them not Ready.
	Claims, Launching int
	// Passes counts its provisioning passes since it started.
	Passes float64
}

// autoscalerState is what waitIdle compares between two looks.
type autoscalerState struct {
	Claims, Launching int
	// Bound and Unbound count the scenario's pods.
	Bound, Unbound int
}

// IdleRule says when the autoscaler is done with the pods it could not
// place. Karpenter runs a provisioning pass when pods become pending and
// then every 10 s while one is (each pending pod is looked at again after
// 10 s); the pass after the one in progress when the state last changed
// saw that state. It creates its NodeClaims just after the pass is
// counted, so the verdict is confirmed a moment later.
type IdleRule struct {
	// Passes is how many provisioning passes must end with nothing
	// changed: 2, since the first may have started before the change.
	Passes float64
	// MinQuiet is how long nothing must change even after Passes passes:
	// passes can come back to back (a batch of pod events) before Karpenter
	// can act (its NodePool not Ready yet); each pending pod is looked at
	// again within 10 s.
	MinQuiet time.Duration
	// Quiet is how long with nothing changed is idle even without passes
	// (pods Karpenter does not look at: preempting, say).
	Quiet time.Duration
	// Confirm is how long the verdict must hold.
	Confirm time.Duration
	// Poll is how often the autoscaler is looked at.
	Poll time.Duration
}

// DefaultIdleRule is Karpenter's.
var DefaultIdleRule = IdleRule{Passes: 2, MinQuiet: 10 * time.Second, Quiet: 30 * time.Second, Confirm: time.Second, Poll: 500 * time.Millisecond}

// idleTracker applies an IdleRule to successive looks.
type idleTracker struct {
	rule    IdleRule
	started bool
	last    autoscalerState
	// since and passes are when the state last changed, and the passes then.
	since  time.Time
	passes float64
	// idleAt is when the verdict first held since the last change.
	idleAt time.Time
}

// observe records a look at st, with passes provisioning passes so far,
// and says whether the autoscaler is idle: no node launching, and nothing
// changed for rule.Passes passes and rule.MinQuiet, or for rule.Quiet, for
// rule.Confirm.
func (t *idleTracker) observe(now time.Time, st autoscalerState, passes float64) bool {
	// Fewer passes than before: it restarted, its counters anew.
	if !t.started || st != t.last || passes < t.passes {
		t.started, t.last, t.since, t.passes, t.idleAt = true, st, now, passes, time.Time{}
		return false
	}
	quiet := now.Sub(t.since)
	if st.Launching > 0 || quiet < t.rule.MinQuiet || (passes < t.passes+t.rule.Passes && quiet < t.rule.Quiet) {
		t.idleAt = time.Time{}
		return false
	}
	if t.idleAt.IsZero() {
		t.idleAt = now
	}
	return now.Sub(t.idleAt) >= t.rule.Confirm
}

// waitIdle returns once a pod of targets was bound (false: the caller
// waits for the objects to settle again, as a bound pod may let a
// controller make the next), or the autoscaler is idle with pods still
// unbound (true). It fails when ctx ends, or the cluster stopped.
func (s *Settler) waitIdle(ctx context.Context, targets []workload.Target) (bool, error) {
	logger := klog.FromContext(ctx)
	a, rule := s.Autoscaler, s.IdleRule
	if rule == (IdleRule{}) {
		rule = DefaultIdleRule
	}
	t := idleTracker{rule: rule}
	tick := time.NewTicker(rule.Poll)
	defer tick.Stop()
	firstBound := -1
	for {
		if err := s.Watcher.checkAlive(); err != nil {
			return false, err
		}
		st := autoscalerState{}
		for _, op := range s.Watcher.Pods(targets) {
			if workload.Bound(op.Pod) {
				st.Bound++
			} else {
				st.Unbound++
			}
		}
		if st.Unbound == 0 {
			return false, nil
		}
		if firstBound < 0 {
			firstBound = st.Bound
		} else if st.Bound > firstBound {
			return false, nil
		}
		prov, err := a.Provisioning(ctx)
		if err != nil {
			return false, err
		}
		st.Claims, st.Launching = prov.Claims, prov.Launching
		idle := t.observe(time.Now(), st, prov.Passes)
		line := fmt.Sprintf("waiting for %s: %d pods unbound, %d NodeClaims (%d launching)", a.Name(), st.Unbound, st.Claims, st.Launching)
		if line != s.lastLine {
			fmt.Fprintln(s.progress(), line)
			s.lastLine = line
		}
		logger.V(4).Info("Autoscaler", "name", a.Name(), "state", st, "provisioningPasses", prov.Passes, "idle", idle)
		if idle {
			fmt.Fprintf(s.progress(), "%s is idle: %d pods stay unbound\n", a.Name(), st.Unbound)
			return true, nil
		}
		select {
		case <-ctx.Done():
			return false, fmt.Errorf("%s: %w", s.lastLine, ctx.Err())
		case <-tick.C:
		}
	}
}
