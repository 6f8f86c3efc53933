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

package playground

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/internal/localcluster"
	"github.com/adminsched/scheduler-plugins/internal/localcluster/karpenter"
	"github.com/adminsched/scheduler-plugins/internal/playground/report"
	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// karpenterGroups are the API groups of Karpenter's kinds (NodePool,
// NodeClaim, KWOKNodeClass...): a scenario holding one needs --karpenter,
// which installs their CRDs.
var karpenterGroups = []string{karpenter.NodePoolGVR.Group, karpenter.NodeClassGVR.Group}

// defaultNodePool is what a run with Karpenter gets when the scenario holds
// no NodePool: without one Karpenter adds nothing, and an operator trying
// --karpenter on a scenario of theirs (a snapshot, say) wants to see what
// it would add. On-demand nodes of any region, like the default pool of
// Karpenter's getting-started guide; never consolidated, so that the nodes
// reported at the end are the ones it added for the scenario.
func defaultNodePool() karpenter.NodePool {
	np := karpenter.CapacityTypeNodePool(karpenter.CapacityOnDemand)
	np.Name = "default"
	np.ConsolidateAfter = 0
	return np
}

// karpenterObjects returns "objects[i] (Kind name)" for each of the plan's
// objects of Karpenter's kinds, and whether one is a NodePool.
func karpenterObjects(plan *scenario.Plan) (found []string, nodePool bool) {
	for i, o := range plan.Objects {
		gvk := o.GroupVersionKind()
		if !slices.Contains(karpenterGroups, gvk.Group) {
			continue
		}
		found = append(found, fmt.Sprintf("objects[%d] (%s %s)", i, gvk.Kind, o.GetName()))
		if gvk.Group == karpenter.NodePoolGVR.Group && gvk.Kind == "NodePool" {
			nodePool = true
		}
	}
	return found, nodePool
}

// autoscaler is Karpenter on a run's control plane: it makes the run wait
// for it (waitIdle) and reports the nodes it added.
type autoscaler struct {
	k           *karpenter.Karpenter
	client      kubernetes.Interface
	progress    io.Writer
	defaultPool bool
	// poll is how often waitIdle looks; idle tunes its verdict.
	poll time.Duration
	idle idleRule
	// lastLine is waitIdle's last progress line.
	lastLine string
}

// startKarpenter starts Karpenter on cp, with its CRDs, our instance types,
// the KWOKNodeClass its NodePools name (karpenter.DefaultNodeClass) and,
// when the plan holds no NodePool, defaultNodePool.
func startKarpenter(ctx context.Context, cp *localcluster.ControlPlane, assets, logDir string, plan *scenario.Plan, progress io.Writer) (*autoscaler, error) {
	fmt.Fprintf(progress, "starting Karpenter (%s, its KWOK provider) from %s\n", karpenter.Binary, assets)
	k, err := karpenter.Start(ctx, cp, assets, logDir)
	if err != nil {
		return nil, err
	}
	if err := k.CreateNodeClass(ctx); err != nil {
		return nil, err
	}
	client, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return nil, err
	}
	a := &autoscaler{k: k, client: client, progress: progress, poll: 500 * time.Millisecond, idle: defaultIdleRule}
	if _, hasPool := karpenterObjects(plan); !hasPool {
		np := defaultNodePool()
		if err := k.CreateNodePool(ctx, np); err != nil {
			return nil, err
		}
		a.defaultPool = true
		fmt.Fprintf(progress, "the scenario has no NodePool, without which Karpenter adds nothing: made NodePool %s (on-demand nodes of any region, never consolidated)\n", np.Name)
	}
	return a, nil
}

// karpenterState is what waitIdle compares between two looks.
type karpenterState struct {
	// Claims are the NodeClaims not being deleted; Launching those of them
	// not Ready yet (their node not registered, or not Ready).
	Claims, Launching int
	// Bound and Unbound count the scenario's pods.
	Bound, Unbound int
}

// idleRule says when Karpenter is done with the pods it could not place.
// Karpenter runs a provisioning pass when pods become pending and then every
// 10 s while one is (each pending pod is looked at again after 10 s); the
// pass after the one in progress when the state last changed saw that
// state. It creates its NodeClaims just after the pass is counted, so the
// verdict is confirmed a moment later.
type idleRule struct {
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
}

var defaultIdleRule = idleRule{Passes: 2, MinQuiet: 10 * time.Second, Quiet: 30 * time.Second, Confirm: time.Second}

// idleTracker applies an idleRule to successive looks.
type idleTracker struct {
	rule    idleRule
	started bool
	last    karpenterState
	// since and passes are when the state last changed, and the passes then.
	since  time.Time
	passes float64
	// idleAt is when the verdict first held since the last change.
	idleAt time.Time
}

// observe records a look at st, with passes provisioning passes so far,
// and says whether Karpenter is idle: no NodeClaim launching, and nothing
// changed for rule.Passes passes and rule.MinQuiet, or for rule.Quiet, for
// rule.Confirm.
func (t *idleTracker) observe(now time.Time, st karpenterState, passes float64) bool {
	// Fewer passes than before: Karpenter restarted, its counters anew.
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

// waitIdle returns once a pod of pods was bound (false: the caller waits
// for the objects to settle again, as a bound pod may let a controller make
// the next), or Karpenter is idle with pods still unbound (true). It fails when ctx ends, or Karpenter or the
// control plane exited.
func (a *autoscaler) waitIdle(ctx context.Context, pods func() []workload.OwnedPod, alive func() error) (bool, error) {
	logger := klog.FromContext(ctx)
	t := idleTracker{rule: a.idle}
	tick := time.NewTicker(a.poll)
	defer tick.Stop()
	firstBound := -1
	for {
		if err := alive(); err != nil {
			return false, err
		}
		st := karpenterState{}
		for _, op := range pods() {
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
		claims, err := a.k.Client.Resource(karpenter.NodeClaimGVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, fmt.Errorf("listing Karpenter's NodeClaims: %w", err)
		}
		for _, c := range claims.Items {
			if c.GetDeletionTimestamp() != nil {
				continue
			}
			st.Claims++
			if !conditionTrue(&c, "Ready") {
				st.Launching++
			}
		}
		passes, err := a.k.Metric(ctx, karpenter.ProvisioningPasses)
		if err != nil {
			return false, err
		}
		idle := t.observe(time.Now(), st, passes)
		a.progressLine(fmt.Sprintf("waiting for Karpenter: %d pods unbound, %d NodeClaims (%d launching)", st.Unbound, st.Claims, st.Launching))
		logger.V(4).Info("Karpenter", "state", st, "provisioningPasses", passes, "idle", idle)
		if idle {
			fmt.Fprintf(a.progress, "Karpenter is idle: %d pods stay unbound\n", st.Unbound)
			return true, nil
		}
		select {
		case <-ctx.Done():
			return false, fmt.Errorf("waiting for Karpenter (%s): %w", a.lastLine, ctx.Err())
		case <-tick.C:
		}
	}
}

func (a *autoscaler) progressLine(line string) {
	if line != a.lastLine {
		fmt.Fprintln(a.progress, line)
		a.lastLine = line
	}
}

// conditionTrue reports whether obj's status has condition typ True.
func conditionTrue(obj *unstructured.Unstructured, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if t, _, _ := unstructured.NestedString(m, "type"); t == typ {
			s, _, _ := unstructured.NestedString(m, "status")
			return s == string(corev1.ConditionTrue)
		}
	}
	return false
}

// result lists Karpenter's NodePools and the nodes it added (its
// NodePool's label), by name, with the pods of the scenario there.
func (a *autoscaler) result(ctx context.Context, pods []workload.OwnedPod) (*report.KarpenterResult, error) {
	r := &report.KarpenterResult{DefaultNodePool: a.defaultPool, NodePools: []string{}, Nodes: []report.AddedNode{}}
	pools, err := a.k.Client.Resource(karpenter.NodePoolGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing Karpenter's NodePools: %w", err)
	}
	for _, p := range pools.Items {
		r.NodePools = append(r.NodePools, p.GetName())
	}
	slices.Sort(r.NodePools)
	nodes, err := a.addedNodes(ctx)
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		r.Nodes = append(r.Nodes, report.AddedNode{
			Name:         n.Name,
			NodePool:     n.Labels[karpenter.NodePoolLabel],
			Region:       n.Labels[corev1.LabelTopologyRegion],
			Zone:         n.Labels[corev1.LabelTopologyZone],
			CapacityType: n.Labels[karpenter.CapacityTypeLabel],
			InstanceType: n.Labels[corev1.LabelInstanceTypeStable],
		})
	}
	report.CountAddedPods(r.Nodes, pods)
	return r, nil
}

// addedNodes are the nodes of Karpenter's NodePools now, by name.
func (a *autoscaler) addedNodes(ctx context.Context) ([]corev1.Node, error) {
	list, err := a.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: karpenter.NodePoolLabel})
	if err != nil {
		return nil, fmt.Errorf("listing Karpenter's nodes: %w", err)
	}
	slices.SortFunc(list.Items, func(x, y corev1.Node) int { return strings.Compare(x.Name, y.Name) })
	return list.Items, nil
}

// nodeNames are the names of addedNodes.
func (a *autoscaler) nodeNames(ctx context.Context) ([]string, error) {
	nodes, err := a.addedNodes(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(nodes))
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	return names, nil
}
