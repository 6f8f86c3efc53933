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
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/playground/apply"
	"github.com/adminsched/scheduler-plugins/internal/playground/report"
	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
	"github.com/adminsched/scheduler-plugins/internal/playground/settle"
	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// pipeline is one run's steps after the control plane and the scheduler
// started: apply the scenario's objects, run its steps, report. settle
// decides when each is done.
type pipeline struct {
	plan    *scenario.Plan
	applier *apply.Applier
	settler *settle.Settler
	// licenses is the scenario's license server, nil without licenses.
	licenses *licenseServer
	// autoscaler is Karpenter, nil in a run without it: the nodes it added.
	autoscaler *autoscaler
	progress   io.Writer
	// targets are the applied objects, in file order: what the run waits
	// for and reports on.
	targets []workload.Target
	// share counts the on-demand share, nil when the config holds no
	// OnDemandShare policy; shares are its counts so far.
	share  *shareCounter
	shares []report.ShareResult
	// cluster runs the addNodes and deschedule steps; added are the nodes
	// the addNodes steps made so far.
	cluster *cluster
	added   []*corev1.Node
	// descheduler is the run's, nil when no step deschedules; evicted is
	// what the last deschedule step evicted.
	descheduler *descheduler
	evicted     int
	now         func() time.Time
}

// countShare counts the on-demand share after the objects or a step, and
// writes it to the progress.
func (p *pipeline) countShare(ctx context.Context, after string, owned []workload.OwnedPod) error {
	if p.share == nil {
		return nil
	}
	shares, err := p.share.count(ctx, after, owned)
	if err != nil {
		return err
	}
	writeShare(p.progress, shares)
	p.shares = append(p.shares, shares...)
	return nil
}

// applied is the pods once the objects settled, and their share.
func (p *pipeline) applied(ctx context.Context) ([]report.PodResult, error) {
	owned := p.ownedPods()
	names, err := p.nodeNames(ctx)
	if err != nil {
		return nil, err
	}
	return report.Compute(names, owned, nil).Pods, p.countShare(ctx, report.AfterObjects, owned)
}

// applyObjects applies the plan's objects in dependency order, each waited
// for until it is settled before the next, so that a run is deterministic:
// the scheduler sees one object's pods at a time, in file order.
func (p *pipeline) applyObjects(ctx context.Context) error {
	for _, obj := range apply.Order(p.plan.Objects) {
		target, err := p.applier.Apply(ctx, obj)
		if err != nil {
			return err
		}
		p.targets = append(p.targets, target)
		// Only the object just applied was written: the others are
		// judged from the watcher's caches, not read again.
		if err := p.settler.Settle(ctx, p.targets, settle.Change{Written: p.targets[len(p.targets)-1:]}); err != nil {
			return err
		}
	}
	return nil
}

// nodeNames are the scenario's nodes, those its steps added, then
// Karpenter's, by name.
func (p *pipeline) nodeNames(ctx context.Context) ([]string, error) {
	names := p.scenarioNodeNames()
	if p.autoscaler == nil {
		return names, nil
	}
	added, err := p.autoscaler.nodeNames(ctx)
	if err != nil {
		return nil, err
	}
	return append(names, added...), nil
}

// runSteps runs the plan's steps in order. After each it waits until every
// object is settled, writes the pods per node to the progress and records
// them.
func (p *pipeline) runSteps(ctx context.Context) ([]report.StepResult, error) {
	var results []report.StepResult
	for i, st := range p.plan.Steps {
		fmt.Fprintf(p.progress, "step %d/%d: %s\n", i+1, len(p.plan.Steps), st)
		change, err := p.runStep(ctx, st)
		if err != nil {
			return results, fmt.Errorf("step %d (%s): %w", i+1, st, err)
		}
		if err := p.settler.Settle(ctx, p.targets, change); err != nil {
			return results, fmt.Errorf("step %d (%s): %w", i+1, st, err)
		}
		owned := p.ownedPods()
		names, err := p.nodeNames(ctx)
		if err != nil {
			return results, fmt.Errorf("step %d (%s): %w", i+1, st, err)
		}
		counts := report.PerNode(names, owned)
		if err := fillNodes(ctx, p.cluster.client, counts, owned); err != nil {
			return results, fmt.Errorf("step %d (%s): %w", i+1, st, err)
		}
		var b strings.Builder
		for _, n := range counts {
			fmt.Fprintf(&b, " %s=%d", n.Name, n.Pods)
		}
		waiting := 0
		for _, op := range owned {
			if !workload.Bound(op.Pod) {
				waiting++
			}
		}
		if waiting > 0 {
			fmt.Fprintf(&b, ", %d waiting", waiting)
		}
		var evicted *int
		if st.Deschedule != nil {
			evicted = ptr.To(p.evicted)
			fmt.Fprintf(&b, ", %d evicted", p.evicted)
		}
		fmt.Fprintf(p.progress, "pods per node:%s\n", b.String())
		if err := p.countShare(ctx, st.String(), owned); err != nil {
			return results, fmt.Errorf("step %d (%s): %w", i+1, st, err)
		}
		results = append(results, report.StepResult{Step: st.String(), Nodes: counts, Waiting: waiting, Evicted: evicted, Pods: report.Compute(names, owned, nil).Pods})
	}
	return results, nil
}

// runStep does st and says what it changed. A step may write any object:
// all are read again.
func (p *pipeline) runStep(ctx context.Context, st scenario.Step) (settle.Change, error) {
	change := settle.Change{Written: p.targets}
	switch {
	case st.Wait != nil:
		select {
		case <-ctx.Done():
			return change, ctx.Err()
		case <-time.After(st.Wait.Duration):
			return change, nil
		}
	case st.Scale != nil:
		// A scale-down frees room (a quota's, a node's) for pods that
		// were unschedulable.
		change.Requeued = true
		return change, p.applier.Scale(ctx, st.Scale.ObjectRef, *st.Scale.Replicas)
	case st.Delete != nil:
		change.Requeued = true
		return change, p.applier.Delete(ctx, *st.Delete)
	case st.DeleteNodes != nil:
		deleted, err := p.applier.DeleteNodes(ctx, st.DeleteNodes.Names, st.DeleteNodes.LabelSelector().String())
		if err == nil {
			fmt.Fprintf(p.progress, "deleted nodes %s and their pods\n", strings.Join(deleted, ", "))
		}
		return change, err
	case st.Licenses != nil:
		// Seats released outside the cluster make pods schedulable again.
		change.Requeued = true
		return change, p.checkOut(ctx, *st.Licenses)
	case len(st.AddNodes) > 0:
		// New nodes may fit pods that were unschedulable.
		change.Requeued = true
		return change, p.addNodes(ctx, st.AddNodes)
	case st.Deschedule != nil:
		return change, p.deschedule(ctx, st.Deschedule.Cycles)
	}
	return change, fmt.Errorf("empty step")
}

// ownedPods is the pods of every target now, in target order.
func (p *pipeline) ownedPods() []workload.OwnedPod { return p.settler.Watcher.Pods(p.targets) }

// collect computes the result from the targets' pods and, for those not
// bound, the FailedScheduling events of their namespaces (listed once).
func (p *pipeline) collect(ctx context.Context, client kubernetes.Interface) (report.Result, error) {
	pods := p.ownedPods()
	namespaces := sets.New[string]()
	for _, op := range pods {
		if !workload.Bound(op.Pod) {
			namespaces.Insert(op.Pod.Namespace)
		}
	}
	events := map[types.NamespacedName]string{}
	for _, ns := range sets.List(namespaces) {
		list, err := client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{
			FieldSelector: fields.Set{"reason": "FailedScheduling", "involvedObject.kind": "Pod"}.String(),
		})
		if err != nil {
			return report.Result{}, fmt.Errorf("listing the FailedScheduling events of namespace %s: %w", ns, err)
		}
		for k, v := range report.UnschedulableMessages(list.Items) {
			events[k] = v
		}
	}
	res := report.Compute(p.scenarioNodeNames(), pods, events)
	if err := fillNodes(ctx, client, res.Nodes, pods); err != nil {
		return report.Result{}, err
	}
	if p.autoscaler != nil {
		k, err := p.autoscaler.result(ctx, pods)
		if err != nil {
			return report.Result{}, err
		}
		res.Karpenter = k
	}
	return res, nil
}

// fillNodes sets the facts of rs, for the HTML report, from the nodes now
// (one list for all) and the pods.
func fillNodes(ctx context.Context, client kubernetes.Interface, rs []report.NodeResult, pods []workload.OwnedPod) error {
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing the nodes: %w", err)
	}
	report.FillNodes(rs, list.Items, pods)
	return nil
}
