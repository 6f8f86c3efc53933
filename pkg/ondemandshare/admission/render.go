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

// Package admission renders OnDemandShare policies as MutatingAdmissionPolicy
// objects that gate and label, at creation, every pod a policy selects
// (kep/46-on-demand-share/README.md, sections 1 and 6a): the pod gets the
// scheduling gate share.SchedulingGate, which keeps it from the scheduler and
// from autoscalers until the ondemandshare controller has decided its
// capacity class, and the label share.PolicyLabel=<policy>, by which the
// controller watches only its pods. Nothing else: the class is decided later.
//
// Each policy is one policy and one binding, selecting the pods of the
// policy's namespaces, namespace labels and pod labels, outside the excluded
// namespaces, whose schedulerName is a profile that holds the policy, whose
// controller is of a kind the policy counts, and that are not bound yet (the
// API server refuses gates on a pod created with spec.nodeName). A pod two
// policies select belongs to the first by name, whatever order the API
// server runs the policies in: a policy passes over a pod that already has
// the policy label (a policy that ran before labelled it), and over a pod an
// earlier policy by name selects (in case that one runs after it).
package admission

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/pkg/admissionpolicy"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

const (
	// NamePrefix starts the name of every rendered object.
	NamePrefix = "ondemandshare-"
	// ProfilesAnnotation on a rendered object lists the scheduler profiles
	// (schedulerNames) whose OnDemandShare args hold the policy.
	ProfilesAnnotation = "ondemandshare.adminsched.io/profiles"
)

// Renderer names the rendered objects; their share.PolicyLabel names the
// policy they come from.
var Renderer = admissionpolicy.Renderer{
	NamePrefix: NamePrefix,
	ManagedBy:  "ondemandshare-controller",
	CanaryKey:  "ondemandshare.adminsched.io/canary",
}

// ProfileArgs is the OnDemandShare args of one scheduler profile.
type ProfileArgs struct {
	SchedulerName string
	Args          *config.OnDemandShareArgs
}

// FromConfig returns the OnDemandShare args of every profile of cfg (loaded
// and defaulted as kube-scheduler's --config loads it) whose pluginConfig
// holds them, in the profiles' order. The controller acts on the policies a
// profile holds, so a profile holds them whether or not it runs the guard
// plugin.
func FromConfig(cfg *schedconfig.KubeSchedulerConfiguration) ([]ProfileArgs, error) {
	var out []ProfileArgs
	for i := range cfg.Profiles {
		prof := &cfg.Profiles[i]
		args, found, err := admissionpolicy.ArgsOf[*config.OnDemandShareArgs](prof, config.OnDemandShareName)
		if err != nil {
			return nil, err
		}
		if found {
			out = append(out, ProfileArgs{SchedulerName: prof.SchedulerName, Args: args})
		}
	}
	return out, nil
}

// Options change how policies are rendered.
type Options struct {
	// FailurePolicy is what the API server does with a pod when a policy's
	// expression fails. Ignore (the default) creates the pod ungated: the
	// guard plugin still holds its workload to the minimum, but autoscalers
	// do not see the decision. Fail refuses the pod.
	FailurePolicy admissionpolicy.FailurePolicyType
}

// Policy is one OnDemandShare policy rendered.
type Policy struct {
	// Name is the policy's name, the value of the pods' share.PolicyLabel.
	Name string
	admissionpolicy.Pair
}

// Result is what Render produces: one Policy per policy, in the order of
// their names.
type Result struct {
	Policies []Policy
}

// Pairs returns the rendered objects, for admissionpolicy.Apply, Delete and
// WriteYAML.
func (r *Result) Pairs() []admissionpolicy.Pair {
	pairs := make([]admissionpolicy.Pair, 0, len(r.Policies))
	for _, p := range r.Policies {
		pairs = append(pairs, p.Pair)
	}
	return pairs
}

// Render renders the policies of profiles. A policy that several profiles
// hold with the same meaning (the policy and the args' excluded
// namespaces) is rendered once, for all of their schedulerNames; two that
// share a name but not their meaning are an error, since the pod label
// names the policy.
func Render(profiles []ProfileArgs, opts Options) (*Result, error) {
	fp, err := admissionpolicy.CheckFailurePolicy(opts.FailurePolicy)
	if err != nil {
		return nil, err
	}
	groups, err := group(profiles)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	for i, g := range groups {
		pp, err := g.render(groups[:i], fp)
		if err != nil {
			return nil, err
		}
		res.Policies = append(res.Policies, Policy{Name: g.policy.Name, Pair: pp.Render()})
	}
	return res, nil
}

// policyGroup is one policy as the profiles in schedulerNames hold it, with
// the args' excluded namespaces.
type policyGroup struct {
	policy         config.OnDemandSharePolicy
	excluded       []string
	schedulerNames []string
}

// group collects the policies of every profile, sorted by name.
func group(profiles []ProfileArgs) ([]*policyGroup, error) {
	var groups []*policyGroup
	for _, p := range profiles {
		if p.Args == nil {
			continue
		}
		excluded := admissionpolicy.SortedUnique(p.Args.ExcludedNamespaces)
		for _, pol := range p.Args.Policies {
			i := slices.IndexFunc(groups, func(g *policyGroup) bool { return g.policy.Name == pol.Name })
			if i < 0 {
				groups = append(groups, &policyGroup{policy: pol, excluded: excluded, schedulerNames: []string{p.SchedulerName}})
				continue
			}
			g := groups[i]
			if !reflect.DeepEqual(g.policy, pol) || !slices.Equal(g.excluded, excluded) {
				return nil, fmt.Errorf("policy %q: profiles %q and %q hold different policies of that name (or exclude different namespaces): pods are labelled with the policy's name, so one name must mean one policy",
					pol.Name, strings.Join(g.schedulerNames, ","), p.SchedulerName)
			}
			if !slices.Contains(g.schedulerNames, p.SchedulerName) {
				g.schedulerNames = append(g.schedulerNames, p.SchedulerName)
			}
		}
	}
	slices.SortFunc(groups, func(a, b *policyGroup) int { return strings.Compare(a.policy.Name, b.policy.Name) })
	return groups, nil
}

// render returns the policy of g, which passes over the pods the earlier
// policies select.
func (g *policyGroup) render(earlier []*policyGroup, fp admissionpolicy.FailurePolicyType) (admissionpolicy.PodPolicy, error) {
	owners, err := ownerKinds(g.policy.WorkloadKinds)
	if err != nil {
		return admissionpolicy.PodPolicy{}, fmt.Errorf("policy %q: %w", g.policy.Name, err)
	}
	pp := admissionpolicy.PodPolicy{
		Meta: Renderer.ObjectMeta(g.policy.Name, map[string]string{share.PolicyLabel: g.policy.Name},
			map[string]string{ProfilesAnnotation: strings.Join(g.schedulerNames, ",")}),
		NamespaceSelector: g.namespaceSelector(),
		ObjectSelector:    g.policy.PodSelector,
		MatchConditions:   g.matchConditions(owners),
		FailurePolicy:     fp,
	}
	claimed, err := claimedBy(earlier)
	if err != nil {
		return admissionpolicy.PodPolicy{}, fmt.Errorf("policy %q: %w", g.policy.Name, err)
	}
	pp.Patches = []string{gatePatch(claimed != ""), labelPatch(g.policy.Name, claimed != "")}
	if claimed != "" {
		pp.Variables = []admissionpolicy.Variable{{Name: claimedVar, Expression: claimed}}
	}
	return pp, nil
}
