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

// Package nodepoolquota implements NodePoolQuota, a PreFilter and Filter
// plugin that holds teams to the limits of the NodePoolQuota objects of the
// cluster: a pod whose team would pass one of its limits in a pool does not
// fit the pool's nodes. Usage is counted from the scheduler's snapshot, so
// pods assumed earlier in a burst count at once. See README.md in this
// folder.
package nodepoolquota

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/adminsched/scheduler-plugins/apis/scheduling/v1alpha1"
	"github.com/adminsched/scheduler-plugins/pkg/nodepoolquota/quota"
)

// Name is the plugin's name in a KubeSchedulerConfiguration profile.
const Name = "NodePoolQuota"

// NodePoolQuota rejects the nodes of a pool where the pod's team would pass
// one of its limits.
type NodePoolQuota struct {
	// skip is the status of a pod no quota counts, returned by pointer so
	// that the path of most pods does not allocate.
	skip    fwk.Status
	handle  fwk.Handle
	profile string
	// quotas are the cluster's quotas, compiled; an informer's handlers
	// swap them whole, so that a cycle reads one consistent set without
	// a lock.
	quotas atomic.Pointer[quotaSet]
	// mu serializes setQuotas.
	mu sync.Mutex
	// namespaces reads namespace labels for namespaceSelectors; nil reads
	// none (only named namespaces then belong to teams).
	namespaces corelisters.NamespaceLister
	// pods are the scheduler's pods, read to retry pending ones when a
	// quota eases; nil in unit tests that build the plugin alone.
	pods corelisters.PodLister
}

var (
	_ fwk.PreFilterPlugin     = &NodePoolQuota{}
	_ fwk.FilterPlugin        = &NodePoolQuota{}
	_ fwk.PreFilterExtensions = &NodePoolQuota{}
)

// Name returns the plugin's name.
func (pl *NodePoolQuota) Name() string { return Name }

// compiled is one NodePoolQuota compiled at one resourceVersion.
type compiled struct {
	rv string
	q  *quota.Quota
	// selectors is true when a team selects namespaces by label.
	selectors bool
}

// quotaSet is every valid quota, sorted by name. It is never modified
// once stored: setQuotas builds a new one.
type quotaSet struct {
	list      []*compiled
	selectors bool
}

// newPlugin builds the plugin over h's snapshot, reading namespace labels
// from namespaces; quotas come later, from setQuotas.
func newPlugin(h fwk.Handle, namespaces corelisters.NamespaceLister) *NodePoolQuota {
	pl := &NodePoolQuota{skip: *fwk.NewStatus(fwk.Skip), handle: h, profile: profileName(h), namespaces: namespaces}
	pl.quotas.Store(&quotaSet{})
	return pl
}

// setQuotas replaces the quotas by objs. A quota whose name and
// resourceVersion are unchanged keeps its compiled form, so that an update
// of one quota does not recompile the others' selectors. A quota that does
// not compile is left out and logged: it limits no one until it is fixed.
func (pl *NodePoolQuota) setQuotas(logger klog.Logger, objs []*v1alpha1.NodePoolQuota) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	old := map[string]*compiled{}
	for _, c := range pl.quotas.Load().list {
		old[c.q.Name] = c
	}
	next := &quotaSet{list: make([]*compiled, 0, len(objs))}
	for _, obj := range objs {
		c, ok := old[obj.Name]
		if !ok || c.rv != obj.ResourceVersion || obj.ResourceVersion == "" {
			q, err := quota.Compile(obj)
			if err != nil {
				logger.Error(err, "NodePoolQuota left out: it limits no team until it is fixed", "plugin", Name, "quota", klog.KObj(obj))
				continue
			}
			c = &compiled{rv: obj.ResourceVersion, q: q}
			for _, t := range q.Teams {
				c.selectors = c.selectors || t.Selector != nil
			}
		}
		next.list = append(next.list, c)
		next.selectors = next.selectors || c.selectors
	}
	slices.SortFunc(next.list, func(a, b *compiled) int { return strings.Compare(a.q.Name, b.q.Name) })
	pl.quotas.Store(next)
}

// namespaceLabels returns the labels of namespace ns, or nil when it is
// unknown or no lister reads them: then only teams that name ns match.
func (pl *NodePoolQuota) namespaceLabels(ns string) labels.Set {
	if pl.namespaces == nil {
		return nil
	}
	obj, err := pl.namespaces.Get(ns)
	if err != nil {
		return nil
	}
	return labels.Set(obj.Labels)
}

// pair is one (quota, team) that a pod counts against, with what the pod
// asks for and what the team uses in the pool, both in the order of the
// team's limits.
type pair struct {
	q    *quota.Quota
	team int
	req  []int64
	used []int64
	// rejected is shared by a cycle state and its clones, so that one
	// scheduling attempt counts one rejection per pair however many nodes
	// (and preemption dry runs) Filter rejects.
	rejected *atomic.Bool
}

func (p *pair) teamQuota() *quota.Team { return &p.q.Teams[p.team] }

// pairsFor returns the pairs pod counts against, nil when none. It does
// not allocate unless a quota's team holds the pod's namespace.
func (pl *NodePoolQuota) pairsFor(pod *v1.Pod) []pair {
	set := pl.quotas.Load()
	if len(set.list) == 0 {
		return nil
	}
	var nsLabels labels.Set
	if set.selectors {
		nsLabels = pl.namespaceLabels(pod.Namespace)
	}
	var pairs []pair
	for _, c := range set.list {
		t := c.q.TeamOf(pod.Namespace, nsLabels)
		if t < 0 {
			continue
		}
		req := quota.Requests(pod, &c.q.Teams[t])
		if !quota.Counts(req) {
			continue
		}
		pairs = append(pairs, pair{q: c.q, team: t, req: req, used: make([]int64, len(req)), rejected: &atomic.Bool{}})
	}
	return pairs
}

// nsMemo remembers, for one cycle, the labels of the namespaces read.
type nsMemo struct {
	pl *NodePoolQuota
	// skip is true when no quota counted selects namespaces by label.
	skip   bool
	labels map[string]labels.Set
}

func (m *nsMemo) get(ns string) labels.Set {
	if m.skip || m.pl.namespaces == nil {
		return nil
	}
	if l, ok := m.labels[ns]; ok {
		return l
	}
	if m.labels == nil {
		m.labels = map[string]labels.Set{}
	}
	l := m.pl.namespaceLabels(ns)
	m.labels[ns] = l
	return l
}

// count adds sign times what other, a pod on a node of p's pool, requests
// to p.used when its namespace is in p's team. It reads the requests the
// framework computed once for the pod (the resources the scheduler's fit
// counts it for), so that counting a pool allocates nothing.
func (p *pair) count(other fwk.PodInfo, nsLabels func(string) labels.Set, sign int64) {
	pod := other.GetPod()
	if p.q.TeamOf(pod.Namespace, nsLabels(pod.Namespace)) != p.team {
		return
	}
	r := other.CalculateResource().Resource
	for i, l := range p.teamQuota().Limits {
		var amount int64
		switch l.Resource {
		case v1.ResourcePods:
			amount = 1
		case v1.ResourceCPU:
			amount = r.GetMilliCPU()
		case v1.ResourceMemory:
			amount = r.GetMemory()
		case v1.ResourceEphemeralStorage:
			amount = r.GetEphemeralStorage()
		default:
			amount = r.GetScalarResources()[l.Resource]
		}
		p.used[i] += sign * amount
	}
}

// profileName is the profile label of the plugin's metrics: the handle's
// profile, or "" without a handle.
func profileName(h fwk.Handle) string {
	if h == nil {
		return ""
	}
	return h.ProfileName()
}
