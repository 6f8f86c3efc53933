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
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/window"
	"github.com/adminsched/scheduler-plugins/pkg/placementpolicy/match"
)

// wire compiles the profile's args with the scheduler plugins' own code.
func (e *PolicyEvictor) wire(pol *policies) error {
	if pol.placement != nil {
		rules, err := match.Compile(pol.placement)
		if err != nil {
			return fmt.Errorf("PlacementPolicy args of profile %q: %w", pol.profile, err)
		}
		p := &matchPlacement{rules: rules}
		if rules.NeedsNamespaceLabels() {
			p.namespaces = e.handle.SharedInformerFactory().Core().V1().Namespaces().Lister()
		}
		e.placement = p
	}
	if pol.windows != nil {
		c, err := window.New(pol.windows)
		if err != nil {
			return fmt.Errorf("MaintenanceWindow args of profile %q: %w", pol.profile, err)
		}
		e.windows = checkerWindows{c}
	}
	return nil
}

// matchPlacement is placement by PlacementPolicy's compiled rules.
type matchPlacement struct {
	rules *match.Rules
	// namespaces is nil unless a rule reads namespace labels.
	namespaces corelisters.NamespaceLister
}

func (p *matchPlacement) forPod(pod *v1.Pod) (ruleSet, bool, bool, error) {
	if !p.rules.MayApply(pod) {
		return nil, false, false, nil
	}
	var nsLabels labels.Set
	if p.namespaces != nil {
		ns, err := p.namespaces.Get(pod.Namespace)
		if err != nil {
			// The scheduler cannot place the pod either: it fails the same read.
			return nil, false, false, fmt.Errorf("reading the labels of namespace %q: %w", pod.Namespace, err)
		}
		nsLabels = ns.Labels
	}
	r := p.rules.For(pod, nsLabels)
	if r.Empty() {
		return nil, false, false, nil
	}
	return r, len(r.Required) > 0, len(r.Preferred) > 0, nil
}

// checkerWindows is windows by MaintenanceWindow's Filter decision.
type checkerWindows struct{ c *window.Checker }

func (w checkerWindows) exempt(pod *v1.Pod) bool    { return w.c.Exempt(pod) }
func (w checkerWindows) carries(node *v1.Node) bool { return w.c.Sources().Carries(node) }

// blocks uses the pod's own expected runtime. For a member of a pod group
// the scheduler uses the group's, which needs its view of the group.
func (w checkerWindows) blocks(logger klog.Logger, pod *v1.Pod, node *v1.Node, now time.Time) (bool, string) {
	blocked, _, reason := w.c.Blocks(logger, pod, node, now, func() window.Runtime {
		rt, _ := window.PodRuntime(pod)
		return rt
	})
	return blocked, reason
}
