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

package ondemandshare

import (
	"context"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/policy"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

// subsystem prefixes every metric of the plugin.
const subsystem = "ondemandshare"

var undecidedPods = metrics.NewCounterVec(&metrics.CounterOpts{
	Subsystem:      subsystem,
	Name:           "undecided_pods_total",
	Help:           "Pods bound without a decision of the ondemandshare controller, placed by the guard plugin (once per pod). Autoscalers see nothing of the guard's choice.",
	StabilityLevel: metrics.ALPHA,
}, []string{"profile", "policy"})

var registerOnce sync.Once

// registerMetrics registers the plugin's metrics with component-base's legacy
// registry, which kube-scheduler's /metrics serves. It must run before any
// child is taken: a child of an unregistered vec counts nothing.
func registerMetrics() {
	registerOnce.Do(func() { legacyregistry.MustRegister(undecidedPods) })
}

// profileName is the profile label: the handle's profile, or "" without a
// handle (unit tests that build the plugin alone).
func profileName(h fwk.Handle) string {
	if h == nil {
		return ""
	}
	return h.ProfileName()
}

// takeCounters takes every policy's child once, so that each series exists
// (at 0) from the start and PostBind only increments.
func takeCounters(profile string, policies []*policy.Policy) map[string]metrics.CounterMetric {
	out := make(map[string]metrics.CounterMetric, len(policies))
	for _, p := range policies {
		out[p.Name] = undecidedPods.WithLabelValues(profile, p.Name)
	}
	return out
}

// PostBind counts an undecided pod the guard placed, once: the pod is bound
// and never scheduled again. The Event tells the pod's owner why its class
// is not in its node affinity: the controller counts only the pods it
// decided, so this one comes under its count when it is replaced.
func (pl *OnDemandShare) PostBind(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) {
	if state == nil {
		return
	}
	d, err := state.Read(stateKey)
	if err != nil {
		return
	}
	t, ok := d.(*tally)
	if !ok {
		return
	}
	if c := pl.undecided[t.policy.Name]; c != nil {
		c.Inc()
	}
	var class share.Class
	if node, err := pl.nodes.Get(nodeName); err == nil {
		class, _ = t.policy.NodeClass(node)
	}
	klog.FromContext(ctx).V(2).Info("Placed an undecided pod", "pod", klog.KObj(pod), "node", nodeName, "class", class,
		"policy", t.policy.Name, "onDemand", t.onDemand, "required", t.required)
	if pl.recorder != nil {
		pl.recorder.Eventf(pod, nil, v1.EventTypeNormal, "UndecidedPodPlaced", "Scheduling",
			"Policy %s: no on-demand share decision; placed on a %q node with %d/%d replicas on-demand before it",
			t.policy.Name, class, t.onDemand, t.required)
	}
}
