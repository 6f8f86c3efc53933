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

// Package placementpolicy implements PlacementPolicy, a Filter and Score
// plugin that applies placement rules an operator sets once in the profile:
// the pods a rule selects (by namespace, namespace labels and pod labels) may
// only run on, or prefer, the nodes its node selector matches. See README.md
// in this folder.
package placementpolicy

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/adminsched/scheduler-plugins/apis/config"
	// Importing scheme registers PlacementPolicyArgs with the scheduler's
	// config scheme for every scheduler build that imports this plugin.
	"github.com/adminsched/scheduler-plugins/apis/config/scheme"
	"github.com/adminsched/scheduler-plugins/pkg/placementpolicy/match"
)

// Name is the plugin's name in a KubeSchedulerConfiguration profile.
const Name = config.PlacementPolicyName

// PlacementPolicy filters and scores nodes by the placement rules of its args.
type PlacementPolicy struct {
	// skip is the status of a pod no rule applies to, returned by pointer
	// so that the no-rule path does not allocate: the framework only reads
	// a Skip status.
	skip fwk.Status
	// rules decide; their gate stops most pods no rule applies to before
	// any rule is evaluated. data holds the plugin's own per-rule data,
	// indexed like rules.
	rules *match.Rules
	data  []ruleData
	// namespaces, pods and activator are set only when a rule has a
	// namespaceSelector.
	namespaces corelisters.NamespaceLister
	pods       corelisters.PodLister
	activator  fwk.PodActivator
}

var (
	_ fwk.PreFilterPlugin   = &PlacementPolicy{}
	_ fwk.FilterPlugin      = &PlacementPolicy{}
	_ fwk.PostFilterPlugin  = &PlacementPolicy{}
	_ fwk.PreScorePlugin    = &PlacementPolicy{}
	_ fwk.ScorePlugin       = &PlacementPolicy{}
	_ fwk.ScoreExtensions   = &PlacementPolicy{}
	_ fwk.SignPlugin        = &PlacementPolicy{}
	_ fwk.EnqueueExtensions = &PlacementPolicy{}
)

// New builds the plugin from its internal args (defaults apply when obj is
// nil). It reads namespaces through the scheduler's informers only when a
// rule selects pods by namespace labels.
func New(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	args, err := scheme.PluginArgs[*config.PlacementPolicyArgs](Name, obj)
	if err != nil {
		return nil, err
	}
	rules, err := match.Compile(args)
	if err != nil {
		return nil, fmt.Errorf("invalid %s args: %w", Name, err)
	}
	pl := &PlacementPolicy{skip: *fwk.NewStatus(fwk.Skip), rules: rules, data: newRuleData(rules)}
	registerMetrics()
	takeCounters(profileName(h), rules, pl.data)
	if rules.NeedsNamespaceLabels() {
		if h == nil || h.SharedInformerFactory() == nil {
			return nil, fmt.Errorf("%s needs the scheduler's informers to read namespace labels", Name)
		}
		if err := pl.watchNamespaces(klog.FromContext(ctx), h); err != nil {
			return nil, fmt.Errorf("%s: watching namespaces: %w", Name, err)
		}
	}
	klog.FromContext(ctx).V(2).Info("Plugin initialized", "plugin", Name, "rules", rules.Len(), "gateOpen", rules.Open(),
		"ignoreDaemonSetPods", args.IgnoreDaemonSetPods, "excludedNamespaces", args.ExcludedNamespaces)
	return pl, nil
}

// Name returns the plugin's name.
func (pl *PlacementPolicy) Name() string { return Name }

// namespaceLabels returns the labels of pod's namespace, or nil when no rule
// reads them.
func (pl *PlacementPolicy) namespaceLabels(pod *v1.Pod) (labels.Set, error) {
	if pl.namespaces == nil {
		return nil, nil
	}
	ns, err := pl.namespaces.Get(pod.Namespace)
	if err != nil {
		return nil, fmt.Errorf("reading the labels of namespace %q: %w", pod.Namespace, err)
	}
	return labels.Set(ns.Labels), nil
}

// rulesFor returns the rules that apply to pod, nil when none does. It does
// not allocate, nor read the namespace, unless a rule may apply.
func (pl *PlacementPolicy) rulesFor(pod *v1.Pod) (*podRules, error) {
	if !pl.rules.MayApply(pod) || pl.rules.Exempt(pod) {
		return nil, nil
	}
	nsLabels, err := pl.namespaceLabels(pod)
	if err != nil {
		return nil, err
	}
	return pl.rulesWith(pod, nsLabels), nil
}

// rulesWith is rulesFor with the namespace's labels given.
func (pl *PlacementPolicy) rulesWith(pod *v1.Pod, nsLabels labels.Set) *podRules {
	return newPodRules(pl.rules.For(pod, nsLabels))
}

// signatureKey names the plugin's signature fragment, a podSignature.
const signatureKey = "PlacementPolicy.podSignature()"

// podSignature is what the rules that apply to a pod are a function of, read
// from the pod alone.
//
// The framework keeps a pod's signature in its QueuedPodInfo and computes it
// only when the scheduling queue adds or updates the pod (signPod in
// pkg/scheduler/backend/queue/scheduling_queue.go); the batch then reuses the
// previous cycle's filtered and ranked nodes for a pod whose signature is
// byte-equal (framework/runtime/batch.go). So equal signatures must imply
// equal rules at any later moment, and a signature must not read what can
// change without an update of the pod: the labels of its namespace, which
// the queue never sees change. Signing with the names of the rules that
// applied at signing time let two pods of namespaces labelled alike share a
// batch, and a Prefer ranking, after one namespace was relabelled.
//
// Rules lists, in the order of the args, the rules whose namespaces and
// podSelector pass the pod; Namespace is the pod's namespace when one of
// them also has a namespaceSelector. Pods with equal signatures then get the
// same rules whatever the namespace labels are when they are scheduled:
// the same namespace has the same labels at any moment. A namespace's name
// and the pod's labels and owner (which decides the DaemonSet exemption)
// change only with an update of the pod, which re-signs it. The cost is that
// pods of different namespaces that a namespaceSelector rule could select
// never share a batch; batches are runs of like pods in a row, which in
// practice come from one workload, in one namespace.
type podSignature struct {
	Rules     []string `json:"rules,omitempty"`
	Namespace string   `json:"namespace,omitempty"`
}

// signature returns pod's podSignature; it reads no lister.
func (pl *PlacementPolicy) signature(pod *v1.Pod) podSignature {
	var sig podSignature
	if !pl.rules.MayApply(pod) || pl.rules.Exempt(pod) {
		return sig
	}
	for i := range pl.rules.Len() {
		r := pl.rules.At(i)
		if !r.SelectsByPod(pod) {
			continue
		}
		sig.Rules = append(sig.Rules, r.Name())
		if r.HasNamespaceSelector() {
			sig.Namespace = pod.Namespace
		}
	}
	return sig
}

// SignPod signs a pod with its podSignature: pods with equal signatures get
// the same filter and score results, so the profile keeps opportunistic
// batching.
func (pl *PlacementPolicy) SignPod(_ context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	return []fwk.SignFragment{{Key: signatureKey, Value: pl.signature(pod)}}, nil
}
