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

package window

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/pkg/podowner"
)

// Checker is MaintenanceWindow's Filter decision for one set of args: which
// pods are exempt, and which nodes a window keeps a pod off.
type Checker struct {
	sources         *Sources
	avoidWithin     time.Duration
	ignoreDaemonSet bool
	// runtimeAware lets a pod of known runtime use a node until
	// runtimeMargin before its window opens.
	runtimeAware  bool
	runtimeMargin time.Duration
	// exempt is nil when no selector exempts pods.
	exempt labels.Selector
}

// New returns the checker of args, which must be defaulted and valid.
func New(args *config.MaintenanceWindowArgs) (*Checker, error) {
	c := &Checker{
		sources:         NewSources(args),
		avoidWithin:     args.AvoidWithin.Duration,
		ignoreDaemonSet: args.IgnoreDaemonSetPods,
		runtimeAware:    args.RuntimeAware,
		runtimeMargin:   args.RuntimeMargin.Duration,
	}
	if args.ExemptPodSelector != nil {
		var err error
		if c.exempt, err = metav1.LabelSelectorAsSelector(args.ExemptPodSelector); err != nil {
			return nil, fmt.Errorf("exemptPodSelector: %w", err)
		}
	}
	return c, nil
}

// Sources returns where nodes announce windows, with the parse cache.
func (c *Checker) Sources() *Sources { return c.sources }

// SetNodeClaims gives the checker Karpenter's NodeClaims (see
// Sources.SetNodeClaims): once, before the first Filter.
func (c *Checker) SetNodeClaims(claims NodeClaims) { c.sources.SetNodeClaims(claims) }

// Exempt reports whether pod may go to nodes whatever their windows: a
// DaemonSet pod with ignoreDaemonSetPods, or a pod exemptPodSelector
// selects.
func (c *Checker) Exempt(pod *v1.Pod) bool {
	if c.ignoreDaemonSet && podowner.IsDaemonSetPod(pod) {
		return true
	}
	return c.exempt != nil && c.exempt.Matches(labels.Set(pod.Labels))
}

// Blocks is Filter's decision for pod on node at now: blocked when pod is
// not exempt and a window of node's is open, or opens within avoidWithin
// and the pod does not end runtimeMargin before it; until is the end of
// that maintenance (IsUnbounded when unknown: plan no retry at it) and
// reason the rejection's message.
//
// runtime gives the pod's expected runtime; it is called only with
// runtimeAware, and only when a window that has not opened yet blocks the
// node; nil is an unknown runtime. For a member of a pod group it must give
// the group's (GroupRuntime).
func (c *Checker) Blocks(logger klog.Logger, pod *v1.Pod, node *v1.Node, now time.Time, runtime func() Runtime) (blocked bool, until time.Time, reason string) {
	if c.Exempt(pod) {
		return false, time.Time{}, ""
	}
	b, blocked := c.nodeBlock(logger, node, now, runtime)
	if !blocked {
		return false, time.Time{}, ""
	}
	return true, b.Until, b.Reason(now)
}

// NodeBlocked is Blocks for a pod that is not exempt, with the start of
// the window that blocks the node and without the message.
func (c *Checker) NodeBlocked(logger klog.Logger, node *v1.Node, now time.Time, runtime func() Runtime) (start, until time.Time, blocked bool) {
	b, blocked := c.nodeBlock(logger, node, now, runtime)
	return b.Start, b.Until, blocked
}

// nodeBlock is NodeBlocked with what announced the maintenance.
func (c *Checker) nodeBlock(logger klog.Logger, node *v1.Node, now time.Time, runtime func() Runtime) (Block, bool) {
	ws := c.sources.Windows(logger, node)
	if len(ws) == 0 {
		return Block{}, false
	}
	b, blocked := Blocking(ws, now, c.avoidWithin)
	// A window that has not opened yet spares a pod that ends before it;
	// an open window rejects every pod.
	if blocked && b.Start.After(now) && c.runtimeAware && runtime != nil && c.EndsBefore(runtime(), now, b.Start) {
		return Block{}, false
	}
	return b, blocked
}

// EndsBefore reports whether a pod of runtime rt, placed at now, ends
// runtimeMargin or more before start.
func (c *Checker) EndsBefore(rt Runtime, now, start time.Time) bool {
	return rt.Known && !now.Add(rt.D+c.runtimeMargin).After(start)
}

// Reason is the rejection of a node blocked by a window from start to
// until.
func Reason(now, start, until time.Time) string {
	if start.After(now) {
		return fmt.Sprintf("node's maintenance window opens at %s (until %s)",
			start.UTC().Format(time.RFC3339), until.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("node is in a maintenance window until %s", until.UTC().Format(time.RFC3339))
}
