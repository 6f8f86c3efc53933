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
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"
)

// PluginName is the name under which the evictor is registered and enabled
// in a descheduler policy.
const PluginName = "PolicyEvictor"

var _ frameworktypes.EvictorPlugin = &PolicyEvictor{}

// PolicyEvictor refuses evictions that PlacementPolicy or MaintenanceWindow
// would undo or could not place (KEP-47 §6c).
type PolicyEvictor struct {
	logger  klog.Logger
	ctx     context.Context
	handle  frameworktypes.Handle
	args    *PolicyEvictorArgs
	profile string
	// placement and windows are nil when the profile does not run the
	// plugin.
	placement placement
	windows   windows
	respect   bool
	ledger    *ledger
	now       func() time.Time
}

// New builds the evictor from defaulted, validated args: it loads the
// scheduler config again, as the scheduler would at its start.
func New(ctx context.Context, obj runtime.Object, handle frameworktypes.Handle) (frameworktypes.Plugin, error) {
	args, ok := obj.(*PolicyEvictorArgs)
	if !ok {
		return nil, fmt.Errorf("want args of type PolicyEvictorArgs, got %T", obj)
	}
	pol, errs := loadPolicies(args)
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s: %w", PluginName, errs.ToAggregate())
	}
	e := newEvictor(ctx, args, handle, pol.profile)
	if err := e.wire(pol); err != nil {
		return nil, fmt.Errorf("%s: %w", PluginName, err)
	}
	if e.placement == nil && e.windows == nil {
		e.logger.Info("No scheduler profile runs PlacementPolicy or MaintenanceWindow: every eviction passes",
			"schedulerConfig", args.SchedulerConfig, "schedulerName", args.SchedulerName)
	} else {
		e.logger.V(1).Info("Following the scheduler profile", "profile", pol.profile,
			"placementPolicy", e.placement != nil, "maintenanceWindow", e.windows != nil)
	}
	return e, nil
}

// newEvictor returns an evictor without policies: wire adds them.
func newEvictor(ctx context.Context, args *PolicyEvictorArgs, handle frameworktypes.Handle, profile string) *PolicyEvictor {
	registerMetrics()
	ttl := DefaultAdmittedTTL
	if args.AdmittedTTL != nil {
		ttl = args.AdmittedTTL.Duration
	}
	logger := klog.FromContext(ctx).WithValues("plugin", PluginName)
	// Informers requested here run before the first cycle (KEP-47 §4).
	handle.SharedInformerFactory().Core().V1().Nodes().Informer()
	return &PolicyEvictor{
		logger:  logger,
		ctx:     klog.NewContext(ctx, logger),
		handle:  handle,
		args:    args,
		profile: profile,
		respect: args.Preferred != PreferredIgnore,
		ledger:  newLedger(ttl),
		now:     time.Now,
	}
}

// Name returns the plugin's name.
func (e *PolicyEvictor) Name() string { return PluginName }

// subject returns the pod's rules, and whether one of our policies holds
// the pod at all: a Require rule selects it (or a Prefer rule, with
// preferred: Respect), or it is not exempt from windows and some node
// announces one. Only subject pods pay for the search of another node.
func (e *PolicyEvictor) subject(pod *v1.Pod) (ruleSet, bool, error) {
	var rules ruleSet
	if e.placement != nil {
		r, required, preferred, err := e.placement.forPod(pod)
		if err != nil {
			return nil, true, err
		}
		if required || (preferred && e.respect) {
			rules = r
		}
	}
	if rules != nil {
		return rules, true, nil
	}
	return nil, e.windows != nil && !e.windows.exempt(pod) && e.windowsAnnounced(), nil
}

// windowsAnnounced reports whether any node announces a window.
func (e *PolicyEvictor) windowsAnnounced() bool {
	nodes, err := e.handle.SharedInformerFactory().Core().V1().Nodes().Lister().List(labelsEverything)
	if err != nil {
		return true
	}
	for _, n := range nodes {
		if e.windows.carries(n) {
			return true
		}
	}
	return false
}

// Filter lets through every pod that none of our policies holds. For the
// others it refuses, cheaply (labels only, no pod lists), a pod that no
// other ready node admits by its policies: the full check in
// PreEvictionFilter would refuse it too, and refusing here lets a strategy
// pick another pod instead.
func (e *PolicyEvictor) Filter(pod *v1.Pod) bool {
	rules, ok, err := e.subject(pod)
	if !ok {
		return true
	}
	var reason string
	if err == nil {
		_, reason, err = e.search(pod, rules, false)
	}
	if err != nil {
		return e.refuse(pod, reasonError, err.Error())
	}
	if reason != "" {
		return e.refuse(pod, reason, "at Filter")
	}
	return true
}

// PreEvictionFilter lets a pod that one of our policies holds be evicted
// only when it has another node to go to (KEP-47 §6c), and records that
// node in the ledger.
func (e *PolicyEvictor) PreEvictionFilter(pod *v1.Pod) bool {
	rules, ok, err := e.subject(pod)
	if !ok {
		return true
	}
	var target, reason string
	if err == nil {
		target, reason, err = e.search(pod, rules, true)
	}
	if err != nil {
		return e.refuse(pod, reasonError, err.Error())
	}
	if reason != "" {
		return e.refuse(pod, reason, "")
	}
	e.ledger.admit(pod, target, e.now())
	return true
}
