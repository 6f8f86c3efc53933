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

package validation

import (
	"fmt"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

const (
	// MaxOnDemandCount bounds minOnDemandCount: far above any workload's
	// replicas, low enough that a typo is caught.
	MaxOnDemandCount = 100000
	// MaxSpotWait bounds spotWaitTimeout and recovery.interval: a pod that
	// waits longer than a week for capacity is stranded, not waiting.
	MaxSpotWait = 7 * 24 * time.Hour
	// MaxRecoveriesPerInterval bounds recovery.maxPodsPerInterval.
	MaxRecoveriesPerInterval = 1000
)

var (
	supportedWorkloadKinds = []string{string(config.WorkloadDeployment), string(config.WorkloadReplicaSet),
		string(config.WorkloadStatefulSet), string(config.WorkloadJob)}
	supportedCapacityPresets = []string{string(config.CapacityKarpenter), string(config.CapacityEKSManagedNodeGroup),
		string(config.CapacityGKE), string(config.CapacityAKS), string(config.CapacityCustom)}
	supportedNodeOperators = []string{string(v1.NodeSelectorOpIn), string(v1.NodeSelectorOpNotIn),
		string(v1.NodeSelectorOpExists), string(v1.NodeSelectorOpDoesNotExist),
		string(v1.NodeSelectorOpGt), string(v1.NodeSelectorOpLt)}
	supportedTolerationOperators = []string{string(v1.TolerationOpEqual), string(v1.TolerationOpExists)}
	supportedTaintEffects        = []string{string(v1.TaintEffectNoSchedule), string(v1.TaintEffectPreferNoSchedule),
		string(v1.TaintEffectNoExecute)}
)

// ValidateOnDemandShareArgs returns every problem of args as one aggregate
// error, or nil. path is where the args live.
func ValidateOnDemandShareArgs(path *field.Path, args *config.OnDemandShareArgs) error {
	var allErrs field.ErrorList
	names := sets.New[string]()
	policiesPath := path.Child("policies")
	for i := range args.Policies {
		p := &args.Policies[i]
		pp := policiesPath.Index(i)
		allErrs = append(allErrs, validateName(pp.Child("name"), p.Name, names,
			"every policy is named in the labels, events and metrics of the pods it decides")...)
		allErrs = append(allErrs, validatePodSelection(pp, p.Namespaces, p.NamespaceSelector, p.PodSelector, "policy")...)
		allErrs = append(allErrs, validateWorkloadKinds(pp.Child("workloadKinds"), p.WorkloadKinds)...)
		allErrs = append(allErrs, validateMinimum(pp, p)...)
		allErrs = append(allErrs, validateCapacity(pp.Child("capacity"), &p.Capacity)...)
		allErrs = append(allErrs, validateWait(pp.Child("spotWaitTimeout"), p.SpotWaitTimeout.Duration)...)
		allErrs = append(allErrs, validateWait(pp.Child("recovery", "interval"), p.Recovery.Interval.Duration)...)
		if n := p.Recovery.MaxPodsPerInterval; n < 1 || n > MaxRecoveriesPerInterval {
			allErrs = append(allErrs, field.Invalid(pp.Child("recovery", "maxPodsPerInterval"), n,
				fmt.Sprintf("must be in the range 1-%d", MaxRecoveriesPerInterval)))
		}
	}
	allErrs = append(allErrs, validateNamespaces(path.Child("excludedNamespaces"), args.ExcludedNamespaces)...)
	return allErrs.ToAggregate()
}

func validateWorkloadKinds(path *field.Path, kinds []config.WorkloadKind) field.ErrorList {
	if len(kinds) == 0 {
		return field.ErrorList{field.Required(path, fmt.Sprintf("the workloads whose pods are counted: %q", supportedWorkloadKinds))}
	}
	var allErrs field.ErrorList
	seen := sets.New[config.WorkloadKind]()
	for i, k := range kinds {
		switch k {
		case config.WorkloadDeployment, config.WorkloadReplicaSet, config.WorkloadStatefulSet, config.WorkloadJob:
		default:
			allErrs = append(allErrs, field.NotSupported(path.Index(i), k, supportedWorkloadKinds))
		}
		if seen.Has(k) {
			allErrs = append(allErrs, field.Duplicate(path.Index(i), k))
		}
		seen.Insert(k)
	}
	return allErrs
}

func validateMinimum(path *field.Path, p *config.OnDemandSharePolicy) field.ErrorList {
	var allErrs field.ErrorList
	if p.MinOnDemandCount < 0 || p.MinOnDemandCount > MaxOnDemandCount {
		allErrs = append(allErrs, field.Invalid(path.Child("minOnDemandCount"), p.MinOnDemandCount,
			fmt.Sprintf("must be in the range 0-%d", MaxOnDemandCount)))
	}
	if p.MinOnDemandPercent < 0 || p.MinOnDemandPercent > 100 {
		allErrs = append(allErrs, field.Invalid(path.Child("minOnDemandPercent"), p.MinOnDemandPercent,
			"must be in the range 0-100"))
	}
	if p.MinOnDemandCount == 0 && p.MinOnDemandPercent == 0 {
		allErrs = append(allErrs, field.Required(path.Child("minOnDemandPercent"),
			"a policy needs minOnDemandCount or minOnDemandPercent above 0: with both at 0 it asks for nothing"))
	}
	return allErrs
}

func validateWait(path *field.Path, d time.Duration) field.ErrorList {
	if d < 0 || d > MaxSpotWait {
		return field.ErrorList{field.Invalid(path, d.String(), fmt.Sprintf("must be in the range 0s-%v (a week); 0s turns it off", MaxSpotWait))}
	}
	return nil
}

func validateCapacity(path *field.Path, c *config.CapacityClasses) field.ErrorList {
	var allErrs field.ErrorList
	switch c.Preset {
	case config.CapacityCustom:
		allErrs = append(allErrs, validateClassRequirements(path.Child("onDemand"), c.OnDemand)...)
		allErrs = append(allErrs, validateClassRequirements(path.Child("spot"), c.Spot)...)
		if len(allErrs) == 0 {
			allErrs = append(allErrs, validateDisjointClasses(path, c)...)
		}
	case config.CapacityKarpenter, config.CapacityEKSManagedNodeGroup, config.CapacityGKE, config.CapacityAKS:
		for name, reqs := range map[string][]v1.NodeSelectorRequirement{"onDemand": c.OnDemand, "spot": c.Spot} {
			if len(reqs) > 0 {
				allErrs = append(allErrs, field.Forbidden(path.Child(name),
					fmt.Sprintf("only the Custom preset takes node requirements; the %s preset has its own", c.Preset)))
			}
		}
	default:
		allErrs = append(allErrs, field.NotSupported(path.Child("preset"), c.Preset, supportedCapacityPresets))
	}
	for i := range c.SpotTolerations {
		allErrs = append(allErrs, validateToleration(path.Child("spotTolerations").Index(i), &c.SpotTolerations[i])...)
	}
	return allErrs
}

func validateClassRequirements(path *field.Path, reqs []v1.NodeSelectorRequirement) field.ErrorList {
	if len(reqs) == 0 {
		return field.ErrorList{field.Required(path, "the Custom preset needs the node requirements of both classes")}
	}
	var allErrs field.ErrorList
	for i := range reqs {
		r := &reqs[i]
		rp := path.Index(i)
		for _, msg := range validation.IsQualifiedName(r.Key) {
			allErrs = append(allErrs, field.Invalid(rp.Child("key"), r.Key, msg))
		}
		switch r.Operator {
		case v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn:
			if len(r.Values) == 0 {
				allErrs = append(allErrs, field.Required(rp.Child("values"), "In and NotIn need at least one value"))
			}
		case v1.NodeSelectorOpExists, v1.NodeSelectorOpDoesNotExist:
			if len(r.Values) > 0 {
				allErrs = append(allErrs, field.Forbidden(rp.Child("values"), "Exists and DoesNotExist take no values"))
			}
		case v1.NodeSelectorOpGt, v1.NodeSelectorOpLt:
			if len(r.Values) != 1 {
				allErrs = append(allErrs, field.Invalid(rp.Child("values"), r.Values, "Gt and Lt take exactly one integer"))
			} else if _, err := strconv.ParseInt(r.Values[0], 10, 64); err != nil {
				allErrs = append(allErrs, field.Invalid(rp.Child("values").Index(0), r.Values[0], "must be an integer"))
			}
		default:
			allErrs = append(allErrs, field.NotSupported(rp.Child("operator"), r.Operator, supportedNodeOperators))
		}
		if r.Operator == v1.NodeSelectorOpIn || r.Operator == v1.NodeSelectorOpNotIn {
			for j, v := range r.Values {
				for _, msg := range validation.IsValidLabelValue(v) {
					allErrs = append(allErrs, field.Invalid(rp.Child("values").Index(j), v, msg))
				}
			}
		}
	}
	return allErrs
}

// validateDisjointClasses catches the commonest Custom mistake, two classes
// that one node satisfies: it builds the labels of a node that onDemand
// admits and checks that spot refuses it. It cannot prove the two disjoint
// for every node, only that they are not the same in the obvious case.
func validateDisjointClasses(path *field.Path, c *config.CapacityClasses) field.ErrorList {
	node := &v1.Node{}
	node.Labels = map[string]string{}
	for _, r := range c.OnDemand {
		switch r.Operator {
		case v1.NodeSelectorOpIn:
			node.Labels[r.Key] = r.Values[0]
		case v1.NodeSelectorOpExists:
			node.Labels[r.Key] = "true"
		case v1.NodeSelectorOpGt, v1.NodeSelectorOpLt:
			n, _ := strconv.ParseInt(r.Values[0], 10, 64)
			if r.Operator == v1.NodeSelectorOpGt {
				n++
			} else {
				n--
			}
			node.Labels[r.Key] = strconv.FormatInt(n, 10)
		}
	}
	matches := func(reqs []v1.NodeSelectorRequirement) bool {
		s, err := nodeaffinity.NewNodeSelector(&v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: reqs}}})
		return err == nil && s.Match(node)
	}
	if matches(c.OnDemand) && matches(c.Spot) {
		return field.ErrorList{field.Invalid(path.Child("spot"), c.Spot,
			fmt.Sprintf("matches a node that onDemand matches too (labels %v): the two classes must not share nodes", node.Labels))}
	}
	return nil
}

func validateToleration(path *field.Path, t *v1.Toleration) field.ErrorList {
	var allErrs field.ErrorList
	if t.Key != "" {
		for _, msg := range validation.IsQualifiedName(t.Key) {
			allErrs = append(allErrs, field.Invalid(path.Child("key"), t.Key, msg))
		}
	}
	switch t.Operator {
	case v1.TolerationOpEqual, "":
		if t.Key == "" {
			allErrs = append(allErrs, field.Invalid(path.Child("operator"), t.Operator, "must be Exists when key is empty"))
		}
	case v1.TolerationOpExists:
		if t.Value != "" {
			allErrs = append(allErrs, field.Forbidden(path.Child("value"), "Exists takes no value"))
		}
	default:
		allErrs = append(allErrs, field.NotSupported(path.Child("operator"), t.Operator, supportedTolerationOperators))
	}
	switch t.Effect {
	case "", v1.TaintEffectNoSchedule, v1.TaintEffectPreferNoSchedule, v1.TaintEffectNoExecute:
	default:
		allErrs = append(allErrs, field.NotSupported(path.Child("effect"), t.Effect, supportedTaintEffects))
	}
	return allErrs
}
