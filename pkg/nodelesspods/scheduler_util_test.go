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

package nodelesspods_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clientsetfake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	kubeschedulerv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/kubernetes/pkg/scheduler"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	configtesting "k8s.io/kubernetes/pkg/scheduler/apis/config/testing"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/profile"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	"k8s.io/utils/ptr"

	nodelesspodsv1 "github.com/adminsched/scheduler-plugins/apis/config/v1"
	"github.com/adminsched/scheduler-plugins/internal/playground/report"
	"github.com/adminsched/scheduler-plugins/pkg/nodelesspods"
)

// The in-process scheduler tests run kube-scheduler's own scheduling loop
// (scheduler.New and Run, as the binary does) on a fake clientset, with
// NodeLessPods registered out of tree. The fake API server acknowledges a
// binding at once but shows the bound pod only bindDelay later, as a busy API
// server and a lagging watch do: in between, the scheduler knows the pod
// through its assumed-pod cache only. Assertions are made on the API server's
// (the tracker's) final state, never on timing.
const (
	bindDelay = time.Second
	// waitTimeout bounds every wait; a healthy run needs a few seconds.
	waitTimeout = 30 * time.Second
	// pollInterval is how often waits look at the tracker or the cache.
	pollInterval = 20 * time.Millisecond
	// nodeLessPodsWeight lets the pod count outweigh the default plugins'
	// resource scores, as the example config does.
	nodeLessPodsWeight = 3
	testNamespace      = "default"
)

// Requests of every pod; nodes are sized so that resources never decide.
var (
	podRequests = map[v1.ResourceName]string{v1.ResourceCPU: "100m", v1.ResourceMemory: "64Mi"}
	nodeSize    = map[v1.ResourceName]string{v1.ResourcePods: "110", v1.ResourceCPU: "1000", v1.ResourceMemory: "4000Gi"}
)

// makeNode returns a node big enough that no test runs out of resources.
func makeNode(name string, uid types.UID) *v1.Node {
	return st.MakeNode().Name(name).UID(string(uid)).Label(v1.LabelHostname, name).Capacity(nodeSize).Obj()
}

// makeNodes returns node-0 ... node-(n-1).
func makeNodes(n int) []*v1.Node {
	nodes := make([]*v1.Node, n)
	for i := range nodes {
		name := fmt.Sprintf("node-%d", i)
		nodes[i] = makeNode(name, types.UID(name))
	}
	return nodes
}

// boundPods returns counts[i] running pods bound to nodes[i], named
// existing-<node>-<j>.
func boundPods(nodes []*v1.Node, counts ...int) []*v1.Pod {
	var pods []*v1.Pod
	for i, n := range nodes {
		for j := range counts[i] {
			name := fmt.Sprintf("existing-%s-%d", n.Name, j)
			pods = append(pods, st.MakePod().Name(name).Namespace(testNamespace).UID(name).
				Node(n.Name).Phase(v1.PodRunning).Req(podRequests).Obj())
		}
	}
	return pods
}

// pendingPod returns a pod for profile schedulerName, identical to every other
// pending pod but for its name and UID.
func pendingPod(name, schedulerName string) *v1.Pod {
	return st.MakePod().Name(name).Namespace(testNamespace).UID(name).
		SchedulerName(schedulerName).Req(podRequests).Obj()
}

// pendingPods returns n pending pods named <prefix>-<i> for profile
// schedulerName.
func pendingPods(prefix string, n int, schedulerName string) []*v1.Pod {
	pods := make([]*v1.Pod, n)
	for i := range pods {
		pods[i] = pendingPod(fmt.Sprintf("%s-%d", prefix, i), schedulerName)
	}
	return pods
}

// enablement says at which extension points a profile enables NodeLessPods.
type enablement int

const (
	// scoreOnly enables it under score: only, as the tutorial's config did:
	// Reserve and Unreserve are then never called.
	scoreOnly enablement = iota
	// multiPoint enables every extension point it implements (score and
	// reserve), as manifests/nodelesspods/scheduler-config.yaml does.
	multiPoint
)

// leastPodsProfile returns a v1 profile that adds NodeLessPods in LeastPods
// mode to the default plugins.
func leastPodsProfile(schedulerName string, how enablement) kubeschedulerv1.KubeSchedulerProfile {
	plugin := kubeschedulerv1.Plugin{Name: nodelesspods.Name, Weight: ptr.To[int32](nodeLessPodsWeight)}
	plugins := &kubeschedulerv1.Plugins{}
	switch how {
	case scoreOnly:
		plugins.Score.Enabled = []kubeschedulerv1.Plugin{plugin}
	case multiPoint:
		plugins.MultiPoint.Enabled = []kubeschedulerv1.Plugin{plugin}
	}
	mode := nodelesspodsv1.NodeLessPodsLeastPods
	return kubeschedulerv1.KubeSchedulerProfile{
		SchedulerName: ptr.To(schedulerName),
		Plugins:       plugins,
		PluginConfig: []kubeschedulerv1.PluginConfig{{
			Name: nodelesspods.Name,
			Args: runtime.RawExtension{Object: &nodelesspodsv1.NodeLessPodsArgs{Mode: mode}},
		}},
	}
}

// internalProfiles defaults and converts v1 profiles the way the scheduler
// does when it loads its config file, and returns the typed profiles
// scheduler.WithProfiles takes. It fails the test when a profile lost
// NodeLessPods or its args did not convert to the internal type.
func internalProfiles(t *testing.T, profiles ...kubeschedulerv1.KubeSchedulerProfile) []schedulerapi.KubeSchedulerProfile {
	t.Helper()
	cfg := configtesting.V1ToInternalWithDefaults(t, kubeschedulerv1.KubeSchedulerConfiguration{Profiles: profiles})
	for _, p := range cfg.Profiles {
		if !slices.ContainsFunc(p.Plugins.Score.Enabled, func(pl schedulerapi.Plugin) bool { return pl.Name == nodelesspods.Name }) &&
			!slices.ContainsFunc(p.Plugins.MultiPoint.Enabled, func(pl schedulerapi.Plugin) bool { return pl.Name == nodelesspods.Name }) {
			t.Fatalf("profile %s does not enable %s: %+v", p.SchedulerName, nodelesspods.Name, p.Plugins)
		}
		i := slices.IndexFunc(p.PluginConfig, func(pc schedulerapi.PluginConfig) bool { return pc.Name == nodelesspods.Name })
		if i < 0 {
			t.Fatalf("profile %s has no %s pluginConfig after defaulting", p.SchedulerName, nodelesspods.Name)
		}
		if _, ok := p.PluginConfig[i].Args.(*runtime.Unknown); ok {
			t.Fatalf("profile %s: %s args did not convert to the internal type", p.SchedulerName, nodelesspods.Name)
		}
	}
	return cfg.Profiles
}

// delayedBinder is the fake API server's pods/binding subresource: it
// accepts a binding at once and sets the pod's spec.nodeName bindDelay later.
type delayedBinder struct {
	cs    *clientsetfake.Clientset
	delay time.Duration
	stop  chan struct{}
	wg    sync.WaitGroup

	mu     sync.Mutex
	closed bool
	errs   []error
}

// delayBindings installs a delayedBinder on cs; t's cleanup stops it and
// waits for its goroutines. Register it before anything that binds, so that
// it is cleaned up after.
func delayBindings(t *testing.T, cs *clientsetfake.Clientset, delay time.Duration) *delayedBinder {
	b := &delayedBinder{cs: cs, delay: delay, stop: make(chan struct{})}
	cs.PrependReactor("create", "pods", b.react)
	t.Cleanup(func() {
		b.mu.Lock()
		b.closed = true
		b.mu.Unlock()
		close(b.stop)
		b.wg.Wait()
		if err := b.err(); err != nil {
			t.Errorf("delayed bindings: %v", err)
		}
	})
	return b
}

// react runs under the fake clientset's lock: it must not call the clientset.
func (b *delayedBinder) react(action clienttesting.Action) (bool, runtime.Object, error) {
	if action.GetSubresource() != "binding" {
		return false, nil, nil
	}
	create, ok := action.(clienttesting.CreateAction)
	if !ok {
		return true, nil, fmt.Errorf("binding action of type %T", action)
	}
	binding, ok := create.GetObject().(*v1.Binding)
	if !ok {
		return true, nil, fmt.Errorf("binding object of type %T", create.GetObject())
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return true, nil, errors.New("the fake API server is shutting down")
	}
	b.wg.Add(1)
	go b.bindLater(binding.DeepCopy())
	return true, binding, nil
}

func (b *delayedBinder) bindLater(binding *v1.Binding) {
	defer b.wg.Done()
	timer := time.NewTimer(b.delay)
	defer timer.Stop()
	select {
	case <-b.stop:
		return
	case <-timer.C:
	}
	patch := fmt.Sprintf(`{"spec":{"nodeName":%q}}`, binding.Target.Name)
	_, err := b.cs.CoreV1().Pods(binding.Namespace).Patch(context.Background(), binding.Name,
		types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		b.mu.Lock()
		b.errs = append(b.errs, fmt.Errorf("binding %s/%s to %s: %w", binding.Namespace, binding.Name, binding.Target.Name, err))
		b.mu.Unlock()
	}
}

func (b *delayedBinder) err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return errors.Join(b.errs...)
}

// testScheduler is a running in-process scheduler on a fake clientset.
type testScheduler struct {
	ctx    context.Context
	cs     *clientsetfake.Clientset
	sched  *scheduler.Scheduler
	binder *delayedBinder
	logs   ktesting.Buffer
}

// startScheduler creates nodes and bound pods in a fake API server whose
// bindings show up after bindDelay, builds a scheduler with profiles and
// NodeLessPods registered out of tree, starts it and waits until its caches
// and event handlers have synced. The test's cleanup stops it and waits for
// its loop, informers and the delayed bindings to end.
func startScheduler(t *testing.T, nodes []*v1.Node, pods []*v1.Pod, profiles ...schedulerapi.KubeSchedulerProfile) *testScheduler {
	t.Helper()
	// V(2) is the scheduler's production level: one line per bound pod.
	// Buffered so that tests can look for what the framework logged.
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(2), ktesting.BufferLogs(true)))
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))

	objs := make([]runtime.Object, 0, 1+len(nodes)+len(pods))
	objs = append(objs, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testNamespace}})
	for _, n := range nodes {
		objs = append(objs, n)
	}
	for _, p := range pods {
		objs = append(objs, p)
	}
	cs := clientsetfake.NewClientset(objs...)
	// Registered first, cleaned up last: the scheduler may still be binding
	// until it has stopped.
	binder := delayBindings(t, cs, bindDelay)

	informerFactory := newInformerFactory(cs)
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	sched, err := scheduler.New(ctx, cs, informerFactory, nil, profile.NewRecorderFactory(broadcaster),
		scheduler.WithProfiles(profiles...),
		scheduler.WithFrameworkOutOfTreeRegistry(frameworkruntime.Registry{nodelesspods.Name: nodelesspods.New}),
	)
	if err != nil {
		cancel()
		broadcaster.Shutdown()
		t.Fatalf("scheduler.New: %v", err)
	}

	done := make(chan struct{})
	t.Cleanup(func() {
		cancel()
		<-done
		informerFactory.Shutdown()
		broadcaster.Shutdown()
	})
	informerFactory.Start(ctx.Done())
	for typ, synced := range informerFactory.WaitForCacheSync(ctx.Done()) {
		if !synced {
			close(done)
			t.Fatalf("informer for %v did not sync", typ)
		}
	}
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		close(done)
		t.Fatalf("scheduler event handlers did not sync: %v", err)
	}
	go func() {
		defer close(done)
		sched.Run(ctx)
	}()
	return &testScheduler{
		ctx:    ctx,
		cs:     cs,
		sched:  sched,
		binder: binder,
		logs:   logger.GetSink().(ktesting.Underlier).GetBuffer(),
	}
}

// createPods creates pods one after the other, without waiting in between.
func (s *testScheduler) createPods(t *testing.T, pods []*v1.Pod) {
	t.Helper()
	for _, p := range pods {
		if _, err := s.cs.CoreV1().Pods(p.Namespace).Create(s.ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating pod %s: %v", klog.KObj(p), err)
		}
	}
}

// createPodsAtOnce creates pods from one goroutine each.
func (s *testScheduler) createPodsAtOnce(t *testing.T, pods []*v1.Pod) {
	t.Helper()
	errs := make([]error, len(pods))
	var wg sync.WaitGroup
	for i, p := range pods {
		wg.Go(func() {
			_, errs[i] = s.cs.CoreV1().Pods(p.Namespace).Create(s.ctx, p, metav1.CreateOptions{})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("creating pods: %v", err)
	}
}

// listPods returns every pod the fake API server holds.
func (s *testScheduler) listPods(t *testing.T) []v1.Pod {
	t.Helper()
	list, err := s.cs.CoreV1().Pods(metav1.NamespaceAll).List(s.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing pods: %v", err)
	}
	return list.Items
}

// waitBound waits until the API server shows every pod in pods bound.
func (s *testScheduler) waitBound(t *testing.T, pods []*v1.Pod) {
	t.Helper()
	want := make(map[string]bool, len(pods))
	for _, p := range pods {
		want[p.Name] = true
	}
	var unbound []string
	err := wait.PollUntilContextTimeout(s.ctx, pollInterval, waitTimeout, true, func(context.Context) (bool, error) {
		if err := s.binder.err(); err != nil {
			return false, err
		}
		unbound = unbound[:0]
		for _, p := range s.listPods(t) {
			if want[p.Name] && p.Spec.NodeName == "" {
				unbound = append(unbound, p.Name)
			}
		}
		return len(unbound) == 0, nil
	})
	if err != nil {
		slices.Sort(unbound)
		t.Fatalf("waiting for %d pods to be bound: %v; still unbound: %v", len(pods), err, unbound)
	}
}

// podsPerNode returns, per node, how many pods the API server shows bound
// there: all of them, and those whose name starts with newPrefix.
func (s *testScheduler) podsPerNode(t *testing.T, nodes []*v1.Node, newPrefix string) (all, added map[string]int) {
	t.Helper()
	all, added = make(map[string]int, len(nodes)), make(map[string]int, len(nodes))
	for _, n := range nodes {
		all[n.Name], added[n.Name] = 0, 0
	}
	for _, p := range s.listPods(t) {
		if p.Spec.NodeName == "" {
			continue
		}
		all[p.Spec.NodeName]++
		if strings.HasPrefix(p.Name, newPrefix) {
			added[p.Spec.NodeName]++
		}
	}
	return all, added
}

// expectEvenSpread asserts that the pods (existing and new, whose names start
// with newPrefix) are spread evenly over nodes: the test sizes them so that
// the ideal is the same count on every node, and a spread of at most one
// then means exactly that count everywhere.
func (s *testScheduler) expectEvenSpread(t *testing.T, nodes []*v1.Node, newPrefix string) {
	t.Helper()
	all, added := s.podsPerNode(t, nodes, newPrefix)
	total := 0
	for _, c := range all {
		total += c
	}
	if total%len(nodes) != 0 {
		t.Fatalf("test bug: %d pods cannot spread evenly over %d nodes", total, len(nodes))
	}
	want := make(map[string]int, len(nodes))
	for _, n := range nodes {
		want[n.Name] = total / len(nodes)
	}
	t.Logf("pods per node: %s (new: %s), spread %d", formatCounts(nodes, all), formatCounts(nodes, added), spread(all))
	if diff := cmp.Diff(want, all); diff != "" {
		t.Errorf("pods are not spread evenly: spread %d, want at most 1; pods per node (-want +got):\n%s", spread(all), diff)
	}
}

// spread is max - min of the pods per node, as the playground reports it.
func spread(counts map[string]int) int {
	return report.Spread(slices.Collect(maps.Values(counts)))
}

// formatCounts prints counts in node order, as "10/10/10".
func formatCounts(nodes []*v1.Node, counts map[string]int) string {
	parts := make([]string, len(nodes))
	for i, n := range nodes {
		parts[i] = fmt.Sprint(counts[n.Name])
	}
	return strings.Join(parts, "/")
}
