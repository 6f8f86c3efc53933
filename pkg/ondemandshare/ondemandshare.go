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

// Package ondemandshare implements OnDemandShare, the guard plugin of the
// on-demand share (kep/46-on-demand-share/README.md §6f). The ondemandshare
// controller decides each selected pod's capacity class while the pod is
// gated; the plugin only guards the pods that reach the scheduler without a
// decision: it holds such a pod to on-demand nodes while its workload has
// fewer on-demand replicas than its policy requires, and otherwise prefers
// spot. See README.md in this folder.
package ondemandshare

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/metrics"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/adminsched/scheduler-plugins/apis/config"
	// Importing scheme registers OnDemandShareArgs with the scheduler's
	// config scheme for every scheduler build that imports this plugin.
	"github.com/adminsched/scheduler-plugins/apis/config/scheme"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/policy"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/workload"
)

// Name is the plugin's name in a KubeSchedulerConfiguration profile.
const Name = config.OnDemandShareName

// OnDemandShare guards the on-demand share of undecided pods.
type OnDemandShare struct {
	// skip is returned by pointer, so that the path of the pods the plugin
	// leaves alone does not allocate; the framework only reads it.
	skip     fwk.Status
	policies []*policy.Policy
	// byName holds, per policy, what SignPod may read: the parts of its
	// selection that depend on the pod alone.
	byName map[string]podOnly
	// readsNamespaceLabels: some policy has a namespaceSelector.
	readsNamespaceLabels bool

	namespaces  corelisters.NamespaceLister
	replicaSets appslisters.ReplicaSetLister
	// nodes serves PostBind, which runs outside the scheduling cycle, when
	// the snapshot may be rewritten by the next one.
	nodes corelisters.NodeLister
	// podsByOwner and rsByOwner index pods and ReplicaSets by their
	// controller's UID (workload.ControllerIndex).
	podsByOwner, rsByOwner cache.Indexer
	snapshot               fwk.SharedLister
	recorder               events.EventRecorder
	undecided              map[string]metrics.CounterMetric
}

// podOnly is the part of a policy's selection that reads the pod alone.
type podOnly struct {
	excluded, namespaces sets.Set[string]
}

var (
	_ fwk.PreFilterPlugin   = &OnDemandShare{}
	_ fwk.FilterPlugin      = &OnDemandShare{}
	_ fwk.PreScorePlugin    = &OnDemandShare{}
	_ fwk.ScorePlugin       = &OnDemandShare{}
	_ fwk.PostBindPlugin    = &OnDemandShare{}
	_ fwk.SignPlugin        = &OnDemandShare{}
	_ fwk.EnqueueExtensions = &OnDemandShare{}
)

// New builds the plugin from its internal args (defaults apply when obj is
// nil). Without policies it reads nothing and skips every pod; with them it
// reads namespaces, ReplicaSets and pods through the scheduler's informers.
func New(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	args, err := scheme.PluginArgs[*config.OnDemandShareArgs](Name, obj)
	if err != nil {
		return nil, err
	}
	policies, err := policy.Compile(args)
	if err != nil {
		return nil, fmt.Errorf("invalid %s args: %w", Name, err)
	}
	pl := &OnDemandShare{skip: *fwk.NewStatus(fwk.Skip), policies: policies, byName: map[string]podOnly{}}
	for i := range args.Policies {
		p := &args.Policies[i]
		pl.byName[p.Name] = podOnly{excluded: sets.New(args.ExcludedNamespaces...), namespaces: sets.New(p.Namespaces...)}
		pl.readsNamespaceLabels = pl.readsNamespaceLabels || p.NamespaceSelector != nil
	}
	registerMetrics()
	pl.undecided = takeCounters(profileName(h), policies)
	if len(policies) > 0 {
		if err := pl.watch(h); err != nil {
			return nil, err
		}
	}
	klog.FromContext(ctx).V(2).Info("Plugin initialized", "plugin", Name, "policies", len(policies))
	return pl, nil
}

// watch takes the listers and indexes the plugin reads.
func (pl *OnDemandShare) watch(h fwk.Handle) error {
	if h == nil || h.SharedInformerFactory() == nil || h.SnapshotSharedLister() == nil {
		return fmt.Errorf("%s needs the scheduler's informers and snapshot", Name)
	}
	f := h.SharedInformerFactory()
	pl.namespaces = f.Core().V1().Namespaces().Lister()
	pl.replicaSets = f.Apps().V1().ReplicaSets().Lister()
	pl.nodes = f.Core().V1().Nodes().Lister()
	var err error
	if pl.podsByOwner, err = ownerIndex(f.Core().V1().Pods().Informer()); err != nil {
		return fmt.Errorf("%s: indexing pods: %w", Name, err)
	}
	if pl.rsByOwner, err = ownerIndex(f.Apps().V1().ReplicaSets().Informer()); err != nil {
		return fmt.Errorf("%s: indexing ReplicaSets: %w", Name, err)
	}
	pl.snapshot = h.SnapshotSharedLister()
	pl.recorder = h.EventRecorder()
	return nil
}

// ownerIndex adds workload.ControllerIndex to informer once: the profiles
// of one scheduler share their informers.
func ownerIndex(informer cache.SharedIndexInformer) (cache.Indexer, error) {
	if _, ok := informer.GetIndexer().GetIndexers()[workload.ControllerIndex]; !ok {
		if err := informer.AddIndexers(cache.Indexers{workload.ControllerIndex: workload.IndexByController}); err != nil {
			return nil, err
		}
	}
	return informer.GetIndexer(), nil
}

// Name returns the plugin's name.
func (pl *OnDemandShare) Name() string { return Name }

// replicaSet is workload.Of's lookup.
func (pl *OnDemandShare) replicaSet(namespace, name string) (*appsv1.ReplicaSet, error) {
	return pl.replicaSets.ReplicaSets(namespace).Get(name)
}

// policyFor returns the policy that selects pod and pod's workload; nil for
// a pod no policy selects and for a decided pod, whose required node
// affinity already holds its class.
func (pl *OnDemandShare) policyFor(pod *v1.Pod) (*policy.Policy, workload.Key, error) {
	if len(pl.policies) == 0 || decided(pod) {
		return nil, workload.Key{}, nil
	}
	kinds := workload.MayBe(pod)
	if kinds == nil {
		return nil, workload.Key{}, nil
	}
	var nsLabels labels.Set
	if pl.readsNamespaceLabels {
		ns, err := pl.namespaces.Get(pod.Namespace)
		if err != nil {
			return nil, workload.Key{}, fmt.Errorf("reading the labels of namespace %q: %w", pod.Namespace, err)
		}
		nsLabels = ns.Labels
	}
	var key workload.Key
	for _, p := range pl.policies {
		if !p.Kinds.HasAny(kinds...) || !p.SelectsNamespace(pod.Namespace, nsLabels) || !p.SelectsPodLabels(pod.Labels) {
			continue
		}
		if key.Kind == "" {
			// The ReplicaSet lookup runs only for a pod a policy may select.
			key, _ = workload.Of(pod, pl.replicaSet)
		}
		if p.Kinds.Has(key.Kind) {
			return p, key, nil
		}
	}
	return nil, workload.Key{}, nil
}

// decided reports whether the controller decided pod's class.
func decided(pod *v1.Pod) bool {
	_, ok := pod.Labels[share.SlotLabel]
	return ok
}

// mayHold reports, from the pod alone, whether a policy may select pod
// undecided: a namespace's labels are not the pod's, so a policy with a
// namespaceSelector may select it whatever they are now.
func (pl *OnDemandShare) mayHold(pod *v1.Pod) bool {
	if len(pl.policies) == 0 || decided(pod) {
		return false
	}
	kinds := workload.MayBe(pod)
	if kinds == nil {
		return false
	}
	for _, p := range pl.policies {
		ns := pl.byName[p.Name]
		if ns.excluded.Has(pod.Namespace) || (ns.namespaces.Len() > 0 && !ns.namespaces.Has(pod.Namespace)) {
			continue
		}
		if p.Kinds.HasAny(kinds...) && p.SelectsPodLabels(pod.Labels) {
			return true
		}
	}
	return false
}

// SignPod refuses to sign a pod that a policy may select undecided: its
// nodes depend on how many of its workload's pods are on-demand, which the
// pod scheduled before it changes, so it must never reuse another pod's
// result. Every other pod is signed with no fragment: the plugin skips it.
func (pl *OnDemandShare) SignPod(_ context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	if pl.mayHold(pod) {
		return nil, fwk.NewStatus(fwk.Unschedulable, "an undecided pod's nodes depend on its workload's other pods")
	}
	return nil, nil
}
