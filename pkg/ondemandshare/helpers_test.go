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
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

const capacityKey = "karpenter.sh/capacity-type"

// webPolicy selects the app=web pods of namespace shop: at least percent of
// each workload's replicas on-demand (Karpenter's labels).
func webPolicy(percent int32) config.OnDemandSharePolicy {
	return config.OnDemandSharePolicy{
		Name:               "web",
		Namespaces:         []string{"shop"},
		PodSelector:        &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		WorkloadKinds:      []config.WorkloadKind{config.WorkloadDeployment, config.WorkloadStatefulSet, config.WorkloadJob},
		MinOnDemandPercent: percent,
		Capacity:           config.CapacityClasses{Preset: config.CapacityKarpenter},
		SpotWaitTimeout:    metav1.Duration{Duration: 5 * time.Minute},
		Recovery:           config.SpotRecovery{Interval: metav1.Duration{Duration: 10 * time.Minute}, MaxPodsPerInterval: 1},
	}
}

func argsOf(policies ...config.OnDemandSharePolicy) *config.OnDemandShareArgs {
	return &config.OnDemandShareArgs{Policies: policies, ExcludedNamespaces: []string{"kube-system"}}
}

func node(name, class string) *v1.Node {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}}}
	if class != "" {
		n.Labels[capacityKey] = class
	}
	return n
}

// testNodes are two on-demand nodes, two spot nodes and one of neither class.
func testNodes() []*v1.Node {
	return []*v1.Node{node("od-1", "on-demand"), node("od-2", "on-demand"), node("spot-1", "spot"), node("spot-2", "spot"), node("plain", "")}
}

func namespace(name string, kv ...string) *v1.Namespace {
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	for i := 0; i+1 < len(kv); i += 2 {
		ns.Labels[kv[i]] = kv[i+1]
	}
	return ns
}

func controllerRef(apiVersion, kind, name string, uid types.UID) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: ptr.To(true)}
}

// Deployment web (UID d-web) with ReplicaSets web-1 and web-2.
var (
	webDeployment = controllerRef("apps/v1", "Deployment", "web", "d-web")
	web1          = replicaSet("web-1", "rs-web-1", webDeployment)
	web2          = replicaSet("web-2", "rs-web-2", webDeployment)
)

func replicaSet(name string, uid types.UID, owner metav1.OwnerReference) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: uid, OwnerReferences: []metav1.OwnerReference{owner}}}
}

// podOpt changes a test pod.
type podOpt func(*v1.Pod)

// webPod is an undecided app=web pod of ReplicaSet web-1 in namespace shop.
func webPod(name string, opts ...podOpt) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "shop", Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{"app": "web"},
			OwnerReferences: []metav1.OwnerReference{controllerRef("apps/v1", "ReplicaSet", web1.Name, web1.UID)},
		},
		Status: v1.PodStatus{Phase: v1.PodPending},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func on(nodeName string) podOpt { return func(p *v1.Pod) { p.Spec.NodeName = nodeName } }

func decidedAs(class share.Class) podOpt {
	return func(p *v1.Pod) { p.Labels[share.SlotLabel] = "1"; p.Labels[share.ClassLabel] = string(class) }
}

func ownedBy(ref metav1.OwnerReference) podOpt {
	return func(p *v1.Pod) { p.OwnerReferences = []metav1.OwnerReference{ref} }
}

func inNamespace(ns string) podOpt { return func(p *v1.Pod) { p.Namespace = ns } }

func labelled(k, v string) podOpt { return func(p *v1.Pod) { p.Labels[k] = v } }

func deleting(p *v1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)} }

func finished(p *v1.Pod) { p.Status.Phase = v1.PodSucceeded }

// world is what the scheduler's informers and snapshot hold.
type world struct {
	namespaces []*v1.Namespace
	rss        []*appsv1.ReplicaSet
	// pods are the informer's pods; assumed are pods the snapshot holds
	// on a node while the informer shows them unbound.
	pods, assumed []*v1.Pod
	nodes         []*v1.Node
}

func defaultWorld(pods ...*v1.Pod) world {
	return world{
		namespaces: []*v1.Namespace{namespace("shop"), namespace("other"), namespace("kube-system")},
		rss:        []*appsv1.ReplicaSet{web1, web2},
		pods:       pods,
		nodes:      testNodes(),
	}
}

var profiles atomic.Int64

// uniqueProfile names a profile no other test uses, so that metrics of one
// test are apart from another's.
func uniqueProfile(t *testing.T) string { return fmt.Sprintf("%s#%d", t.Name(), profiles.Add(1)) }

// testFramework runs the plugin, built by New, in a framework at every
// extension point it implements.
type testFramework struct {
	t        *testing.T
	ctx      context.Context
	f        framework.Framework
	pl       *OnDemandShare
	profile  string
	snapshot *cache.Snapshot
}

func newTestFramework(t *testing.T, args *config.OnDemandShareArgs, w world) *testFramework {
	t.Helper()
	schedmetrics.Register()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	for _, ns := range w.namespaces {
		mustAdd(t, factory.Core().V1().Namespaces().Informer().GetStore().Add(ns))
	}
	for _, rs := range w.rss {
		mustAdd(t, factory.Apps().V1().ReplicaSets().Informer().GetStore().Add(rs))
	}
	for _, n := range w.nodes {
		mustAdd(t, factory.Core().V1().Nodes().Informer().GetStore().Add(n))
	}
	var inSnapshot []*v1.Pod
	for _, p := range w.pods {
		mustAdd(t, factory.Core().V1().Pods().Informer().GetStore().Add(p))
		if p.Spec.NodeName != "" {
			inSnapshot = append(inSnapshot, p)
		}
	}
	inSnapshot = append(inSnapshot, w.assumed...)
	tfw := &testFramework{t: t, ctx: ctx, profile: uniqueProfile(t), snapshot: cache.NewSnapshot(inSnapshot, w.nodes)}
	newPlugin := func(ctx context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		p, err := New(ctx, args, h)
		if err != nil {
			return nil, err
		}
		tfw.pl = p.(*OnDemandShare)
		return p, nil
	}
	f, err := tf.NewFramework(ctx, []tf.RegisterPluginFunc{
		tf.RegisterQueueSortPlugin(queuesort.Name, queuesort.New),
		tf.RegisterBindPlugin(defaultbinder.Name, defaultbinder.New),
		tf.RegisterPluginAsExtensions(Name, newPlugin, "PreFilter", "Filter", "PreScore", "Score", "PostBind"),
	}, tfw.profile, frameworkruntime.WithSnapshotSharedLister(tfw.snapshot), frameworkruntime.WithInformerFactory(factory))
	if err != nil {
		t.Fatal(err)
	}
	tfw.f = f
	return tfw
}

func mustAdd(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// cycleResult is what one scheduling cycle through the framework shows.
type cycleResult struct {
	state                 *framework.CycleState
	skipFilter, skipScore bool
	feasible              []string
	// reasons are the plugin's reasons per rejected node.
	reasons map[string]string
	scores  map[string]int64
}

// cycle runs PreFilter, Filter on every node, PreScore and Score for pod.
func (tfw *testFramework) cycle(pod *v1.Pod) cycleResult {
	tfw.t.Helper()
	ctx, f := tfw.ctx, tfw.f
	state := framework.NewCycleState()
	if _, s, _ := f.RunPreFilterPlugins(ctx, state, pod); !s.IsSuccess() {
		tfw.t.Fatalf("%s: PreFilter: %v", pod.Name, s)
	}
	nodes, err := tfw.snapshot.NodeInfos().List()
	if err != nil {
		tfw.t.Fatal(err)
	}
	r := cycleResult{state: state, reasons: map[string]string{}, scores: map[string]int64{}}
	var feasible []fwk.NodeInfo
	for _, ni := range nodes {
		s := f.RunFilterPlugins(ctx, state, pod, ni)
		if s.IsSuccess() {
			feasible = append(feasible, ni)
			r.feasible = append(r.feasible, ni.Node().Name)
			continue
		}
		if s.Code() != fwk.UnschedulableAndUnresolvable {
			tfw.t.Errorf("%s on %s: code %v, want UnschedulableAndUnresolvable", pod.Name, ni.Node().Name, s.Code())
		}
		r.reasons[ni.Node().Name] = s.Message()
	}
	if s := f.RunPreScorePlugins(ctx, state, pod, feasible); !s.IsSuccess() {
		tfw.t.Fatalf("%s: PreScore: %v", pod.Name, s)
	}
	scores, s := f.RunScorePlugins(ctx, state, pod, feasible)
	if !s.IsSuccess() {
		tfw.t.Fatalf("%s: Score: %v", pod.Name, s)
	}
	for _, ns := range scores {
		r.scores[ns.Name] = ns.TotalScore
	}
	slices.Sort(r.feasible)
	r.skipFilter = state.GetSkipFilterPlugins().Has(Name)
	r.skipScore = state.GetSkipScorePlugins().Has(Name)
	return r
}
