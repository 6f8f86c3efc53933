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

// Package policy turns validated OnDemandShareArgs into policies the
// controller and the plugin use: which pods a policy selects, how many of a
// workload's replicas must be on-demand, and what each capacity class
// requires of a node and tolerates.
package policy

import (
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

// Policy is one OnDemandSharePolicy, compiled.
type Policy struct {
	Name string
	// MinCount and MinPercent are the policy's minimum on demand.
	MinCount, MinPercent int32
	// Kinds are the workload kinds the policy counts.
	Kinds sets.Set[config.WorkloadKind]
	// SpotWaitTimeout is how long a spot pod may stay unschedulable; 0 is
	// forever.
	SpotWaitTimeout time.Duration
	// RecoveryInterval (0 = off) and MaxRecoveriesPerInterval bound the
	// evictions that move fallen-back pods back to spot.
	RecoveryInterval         time.Duration
	MaxRecoveriesPerInterval int32

	namespaces  sets.Set[string]
	excluded    sets.Set[string]
	nsSelector  labels.Selector
	podSelector labels.Selector
	classes     map[share.Class]classSpec
}

type classSpec struct {
	requirements []v1.NodeSelectorRequirement
	tolerations  []v1.Toleration
	nodes        *nodeaffinity.NodeSelector
}

// Compile compiles every policy of args, in the order of their names, which
// is the order in which they claim pods: a pod two policies select belongs
// to the first. args must have passed validation; Compile still returns an
// error rather than a policy that selects wrongly.
func Compile(args *config.OnDemandShareArgs) ([]*Policy, error) {
	excluded := sets.New(args.ExcludedNamespaces...)
	out := make([]*Policy, 0, len(args.Policies))
	for i := range args.Policies {
		p, err := compile(&args.Policies[i], excluded)
		if err != nil {
			return nil, fmt.Errorf("policies[%d] (%q): %w", i, args.Policies[i].Name, err)
		}
		out = append(out, p)
	}
	slices.SortStableFunc(out, func(a, b *Policy) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out, nil
}

func compile(in *config.OnDemandSharePolicy, excluded sets.Set[string]) (*Policy, error) {
	p := &Policy{
		Name:                     in.Name,
		MinCount:                 in.MinOnDemandCount,
		MinPercent:               in.MinOnDemandPercent,
		Kinds:                    sets.New(in.WorkloadKinds...),
		SpotWaitTimeout:          in.SpotWaitTimeout.Duration,
		RecoveryInterval:         in.Recovery.Interval.Duration,
		MaxRecoveriesPerInterval: in.Recovery.MaxPodsPerInterval,
		namespaces:               sets.New(in.Namespaces...),
		excluded:                 excluded,
	}
	var err error
	if p.nsSelector, err = selector(in.NamespaceSelector); err != nil {
		return nil, fmt.Errorf("namespaceSelector: %w", err)
	}
	if p.podSelector, err = selector(in.PodSelector); err != nil {
		return nil, fmt.Errorf("podSelector: %w", err)
	}
	p.classes = make(map[share.Class]classSpec, 2)
	for _, c := range []share.Class{share.OnDemand, share.Spot} {
		spec, err := classOf(&in.Capacity, c)
		if err != nil {
			return nil, fmt.Errorf("capacity: %w", err)
		}
		p.classes[c] = spec
	}
	return p, nil
}

// selector compiles s; nil selects everything.
func selector(s *metav1.LabelSelector) (labels.Selector, error) {
	if s == nil {
		return labels.Everything(), nil
	}
	return metav1.LabelSelectorAsSelector(s)
}

func classOf(c *config.CapacityClasses, class share.Class) (classSpec, error) {
	var spec classSpec
	if c.Preset == config.CapacityCustom {
		spec.requirements = c.OnDemand
		if class == share.Spot {
			spec.requirements = c.Spot
		}
	} else {
		var err error
		spec.requirements, spec.tolerations, err = share.Preset(c.Preset).Requirements(class)
		if err != nil {
			return spec, err
		}
	}
	if len(spec.requirements) == 0 {
		return spec, fmt.Errorf("no node requirements for class %s", class)
	}
	if class == share.Spot {
		spec.tolerations = append(spec.tolerations, c.SpotTolerations...)
	}
	nodes, err := nodeaffinity.NewNodeSelector(&v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: spec.requirements}},
	})
	if err != nil {
		return spec, fmt.Errorf("%s requirements: %w", class, err)
	}
	spec.nodes = nodes
	return spec, nil
}

// Required is how many of n replicas must be on-demand.
func (p *Policy) Required(n int32) int32 { return share.Required(n, p.MinCount, p.MinPercent) }

// SlotClass is the class of slot under this policy.
func (p *Policy) SlotClass(slot int32) share.Class {
	return share.SlotClass(slot, p.MinCount, p.MinPercent)
}

// Requirements returns copies of what a pod of class c requires of its node
// and the tolerations it gains.
func (p *Policy) Requirements(c share.Class) ([]v1.NodeSelectorRequirement, []v1.Toleration) {
	spec := p.classes[c]
	reqs := make([]v1.NodeSelectorRequirement, len(spec.requirements))
	for i := range spec.requirements {
		spec.requirements[i].DeepCopyInto(&reqs[i])
	}
	tols := make([]v1.Toleration, len(spec.tolerations))
	for i := range spec.tolerations {
		spec.tolerations[i].DeepCopyInto(&tols[i])
	}
	return reqs, tols
}

// NodeClass is the class of node, and false when the node is of neither
// (for example a node without the capacity label under the Karpenter preset).
func (p *Policy) NodeClass(node *v1.Node) (share.Class, bool) {
	for _, c := range []share.Class{share.OnDemand, share.Spot} {
		if p.classes[c].nodes.Match(node) {
			return c, true
		}
	}
	return "", false
}

// SelectsNamespace reports whether the policy applies to pods of namespace
// ns with labels nsLabels.
func (p *Policy) SelectsNamespace(ns string, nsLabels labels.Set) bool {
	if p.excluded.Has(ns) {
		return false
	}
	if p.namespaces.Len() > 0 && !p.namespaces.Has(ns) {
		return false
	}
	return p.nsSelector.Matches(nsLabels)
}

// SelectsPodLabels reports whether the policy's podSelector matches.
func (p *Policy) SelectsPodLabels(podLabels labels.Set) bool {
	return p.podSelector.Matches(podLabels)
}
