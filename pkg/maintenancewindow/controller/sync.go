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

package controller

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// FieldManager names the controller's writes in managedFields.
const FieldManager = "maintenancewindow-controller"

// Event reasons, on the Node.
const (
	EventOpened = "MaintenanceWindowOpened"
	EventClosed = "MaintenanceWindowClosed"
)

// sync brings node name's taint and conditions to what its windows say at
// the clock's now, and returns when that changes next (zero: only when the
// node does). Each write is guarded by the resourceVersion it was computed
// from, so another writer's taints and conditions are never overwritten: a
// conflict is an error, retried by the rate limiter on a fresher copy.
func (c *Controller) sync(ctx context.Context, name string) (time.Time, error) {
	logger := klog.FromContext(ctx)
	node, err := c.nodes.Get(name)
	if apierrors.IsNotFound(err) {
		c.marks.set(name, nil)
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, err
	}
	if c.superseded.stale(name, node.ResourceVersion) {
		return time.Time{}, nil
	}
	now := c.clock.Now()
	spans := c.sources.spans(logger, node)
	expiry, k := karpenter(c.claims, node)
	if expiry != nil {
		spans = append(spans, *expiry)
	}
	p := makePlan(spans, k, now, c.ahead)

	taints, changed, refused := reconcileTaint(node.Spec.Taints, p.open != nil)
	if refused {
		c.refuse(logger, "taint", TaintKey)
	}
	if changed {
		updated := node.DeepCopy()
		updated.Spec.Taints = taints
		if node, err = c.write(ctx, node, updated, "taint", &p); node == nil {
			return time.Time{}, err
		}
	}
	// Computed on the node the taint's write returned: the conditions are
	// the kubelet's too, and this copy is the newest.
	conds, changed, refusedTypes := reconcileConditions(node.Status.Conditions, wantedConditions(&p), metav1.NewTime(now))
	for _, t := range refusedTypes {
		c.refuse(logger, "condition", string(t))
	}
	if changed {
		updated := node.DeepCopy()
		updated.Status.Conditions = conds
		if node, err = c.write(ctx, node, updated, "conditions", &p); node == nil {
			return time.Time{}, err
		}
	}
	c.marks.set(name, node)
	return p.next, nil
}

// refuse counts and logs a write left out for another writer's taint or
// condition.
func (c *Controller) refuse(logger klog.Logger, object, typ string) {
	foreignSkips.WithLabelValues(object, typ).Inc()
	logger.V(2).Info("Left another writer's mark as it is", "object", object, "type", typ)
}

// write updates the node (what "taint") or its status ("conditions") and
// returns the node written; nil, with a nil error, when the node is gone.
func (c *Controller) write(ctx context.Context, before, updated *v1.Node, what string, p *plan) (*v1.Node, error) {
	nodes := c.client.CoreV1().Nodes()
	opts := metav1.UpdateOptions{FieldManager: FieldManager}
	var after *v1.Node
	var err error
	if what == "taint" {
		after, err = nodes.Update(ctx, updated, opts)
	} else {
		after, err = nodes.UpdateStatus(ctx, updated, opts)
	}
	switch {
	case apierrors.IsNotFound(err):
		// Deleted while we worked: nothing is left to clean up.
		c.marks.set(before.Name, nil)
		return nil, nil
	case apierrors.IsConflict(err):
		writeErrors.WithLabelValues(what, "conflict").Inc()
		return nil, fmt.Errorf("writing the %s: %w", what, err)
	case err != nil:
		writeErrors.WithLabelValues(what, "other").Inc()
		return nil, fmt.Errorf("writing the %s: %w", what, err)
	}
	c.superseded.add(before.Name, before.ResourceVersion)
	klog.FromContext(ctx).V(2).Info("Wrote the node's maintenance marks", "write", what,
		"open", p.open != nil, "planned", p.planned != nil)
	switch was, is := ownsOpen(before), ownsOpen(after); {
	case !was && is && p.open != nil:
		c.recorder.Eventf(after, v1.EventTypeNormal, EventOpened, "Maintenance %s", p.open.describe("open from"))
	case was && !is:
		c.recorder.Eventf(after, v1.EventTypeNormal, EventClosed, "Maintenance window closed: removed the %s taint and the %s condition this controller set", TaintKey, ConditionMaintenanceInProgress)
	}
	return after, nil
}
