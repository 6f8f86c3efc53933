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

package integration

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/utils/ptr"

	v1config "github.com/adminsched/scheduler-plugins/apis/config/v1"
	"github.com/adminsched/scheduler-plugins/internal/localscheduler"
	"github.com/adminsched/scheduler-plugins/internal/playground/report"
	"github.com/adminsched/scheduler-plugins/internal/testconfig"
)

const (
	schedulerName = "custom-scheduler"
	// pollInterval and waitTimeout bound every wait on the API server.
	pollInterval = 100 * time.Millisecond
	waitTimeout  = 60 * time.Second
)

// testContext is one test's view of the shared control plane: its own
// namespace, and the nodes and other namespaces it created, all removed
// when the test ends.
type testContext struct {
	t          testing.TB
	ctx        context.Context
	ns         string
	mu         sync.Mutex
	nodes      []string
	namespaces []string
	cleanedUp  bool
	logger     klog.Logger
}

var nonDNS = regexp.MustCompile("[^a-z0-9-]+")

func newTestContext(t testing.TB) *testContext {
	t.Helper()
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(2)))
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	name := strings.Trim(nonDNS.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(name) > 40 {
		name = name[:40]
	}
	tc := &testContext{t: t, ctx: ctx, ns: name + "-" + rand.String(5), logger: logger}
	if _, err := adminClient.CoreV1().Namespaces().Create(ctx,
		&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tc.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", tc.ns, err)
	}
	// Cleanups run last-in first-out: this one runs after the test's
	// schedulers have stopped.
	t.Cleanup(func() {
		defer cancel()
		tc.cleanup()
	})
	return tc
}

// cleanup deletes the test's workloads, pods and namespaces, then its
// nodes. Workloads go first, so that no controller replaces the pods; pods
// go with no grace period, so that none is left on a deleted node. It does
// not wait for the namespace controller. It runs once.
func (tc *testContext) cleanup() {
	ctx := context.Background()
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.cleanedUp {
		return
	}
	tc.cleanedUp = true
	background := metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}
	for _, ns := range append([]string{tc.ns}, tc.namespaces...) {
		apps := adminClient.AppsV1()
		// Owners before what they own.
		for _, w := range []struct {
			kind      string
			deleteAll func(context.Context, metav1.DeleteOptions, metav1.ListOptions) error
		}{
			{"Deployments", apps.Deployments(ns).DeleteCollection},
			{"ReplicaSets", apps.ReplicaSets(ns).DeleteCollection},
			{"StatefulSets", apps.StatefulSets(ns).DeleteCollection},
			{"DaemonSets", apps.DaemonSets(ns).DeleteCollection},
			{"Jobs", adminClient.BatchV1().Jobs(ns).DeleteCollection},
		} {
			if err := w.deleteAll(ctx, background, metav1.ListOptions{}); err != nil {
				tc.t.Errorf("deleting the %s of %s: %v", w.kind, ns, err)
			}
		}
		if err := adminClient.CoreV1().Pods(ns).DeleteCollection(ctx,
			metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{}); err != nil {
			tc.t.Errorf("deleting the pods of %s: %v", ns, err)
		}
		if err := adminClient.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			tc.t.Errorf("deleting namespace %s: %v", ns, err)
		}
	}
	for _, n := range tc.nodes {
		if err := adminClient.CoreV1().Nodes().Delete(ctx, n, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			tc.t.Errorf("deleting node %s: %v", n, err)
		}
	}
}

// nodeOption sets one property of a node makeNode builds.
type nodeOption func(*v1.Node)

// makeNode returns a Ready node with 8 CPUs, 32Gi of memory and room for
// 110 pods, changed by opts, for createNodes.
func makeNode(name string, opts ...nodeOption) *v1.Node {
	resources := func() v1.ResourceList {
		return v1.ResourceList{
			v1.ResourceCPU:    resource.MustParse("8"),
			v1.ResourceMemory: resource.MustParse("32Gi"),
			v1.ResourcePods:   resource.MustParse("110"),
		}
	}
	node := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: v1.NodeStatus{
			Capacity:    resources(),
			Allocatable: resources(),
			Conditions:  []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
		},
	}
	for _, opt := range opts {
		opt(node)
	}
	return node
}

// withLabels adds labels to the node's.
func withLabels(labels map[string]string) nodeOption {
	return func(n *v1.Node) {
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		maps.Copy(n.Labels, labels)
	}
}

// withHostnameLabel labels the node with its hostname, as kubelets label
// theirs: PodTopologySpread's system default constraint on
// kubernetes.io/hostname only scores nodes that carry the label.
func withHostnameLabel() nodeOption {
	return func(n *v1.Node) { withLabels(map[string]string{v1.LabelHostname: n.Name})(n) }
}

// withAnnotation sets one annotation of the node.
func withAnnotation(key, value string) nodeOption {
	return func(n *v1.Node) {
		if n.Annotations == nil {
			n.Annotations = map[string]string{}
		}
		n.Annotations[key] = value
	}
}

// withPods sets the node's capacity and allocatable pods.
func withPods(pods int) nodeOption {
	return func(n *v1.Node) {
		q := *resource.NewQuantity(int64(pods), resource.DecimalSI)
		n.Status.Capacity[v1.ResourcePods], n.Status.Allocatable[v1.ResourcePods] = q, q
	}
}

// createNodes creates nodes, which KWOK keeps Ready, and returns their
// names. Node names carry a prefix of the test's so that tests never share
// a node.
func (tc *testContext) createNodes(nodes ...*v1.Node) []string {
	tc.t.Helper()
	var names []string
	for _, node := range nodes {
		// Created with its status (nodes may be): a status set by a second
		// update could come after KWOK's first one, which takes capacity
		// and allocatable from the node as it sees them.
		if _, err := adminClient.CoreV1().Nodes().Create(tc.ctx, node, metav1.CreateOptions{}); err != nil {
			tc.t.Fatalf("creating node %s: %v", node.Name, err)
		}
		tc.mu.Lock()
		tc.nodes = append(tc.nodes, node.Name)
		tc.mu.Unlock()
		names = append(names, node.Name)
	}
	return names
}

// makePod returns a pod for our scheduler with small requests.
func (tc *testContext) makePod(name string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tc.ns, Labels: map[string]string{}},
		Spec: v1.PodSpec{
			SchedulerName: schedulerName,
			Containers: []v1.Container{{
				Name:  "app",
				Image: "registry.k8s.io/pause:3.10",
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
					v1.ResourceCPU:    resource.MustParse("100m"),
					v1.ResourceMemory: resource.MustParse("64Mi"),
				}},
			}},
		},
	}
}

func (tc *testContext) createPod(pod *v1.Pod) *v1.Pod {
	tc.t.Helper()
	if pod.Namespace == "" {
		pod.Namespace = tc.ns
	}
	created, err := adminClient.CoreV1().Pods(pod.Namespace).Create(tc.ctx, pod, metav1.CreateOptions{})
	if err != nil {
		tc.t.Fatalf("creating pod %s/%s: %v", pod.Namespace, pod.Name, err)
	}
	return created
}

// createReplicaSetPods creates a ReplicaSet of replicas pods like makePod's,
// labelled app=name, and waits for the ReplicaSet controller to make them;
// it returns their names. mutate, when set, edits the pod template first.
func (tc *testContext) createReplicaSetPods(name string, replicas int, mutate func(*v1.PodTemplateSpec)) []string {
	tc.t.Helper()
	labels := map[string]string{"app": name}
	template := v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: tc.makePod("template").Spec}
	if mutate != nil {
		mutate(&template)
	}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tc.ns},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(int32(replicas)),
			Selector: &metav1.LabelSelector{MatchLabels: maps.Clone(labels)},
			Template: template,
		},
	}
	if _, err := adminClient.AppsV1().ReplicaSets(tc.ns).Create(tc.ctx, rs, metav1.CreateOptions{}); err != nil {
		tc.t.Fatalf("creating ReplicaSet %s: %v", name, err)
	}
	return tc.waitPods(rs.Spec.Selector, replicas)
}

// createDeploymentPods creates d in the test's namespace and waits for the
// Deployment and ReplicaSet controllers to make its pods; it returns their
// names.
func (tc *testContext) createDeploymentPods(d *appsv1.Deployment) []string {
	tc.t.Helper()
	d = d.DeepCopy()
	d.Namespace = tc.ns
	created, err := adminClient.AppsV1().Deployments(tc.ns).Create(tc.ctx, d, metav1.CreateOptions{})
	if err != nil {
		tc.t.Fatalf("creating Deployment %s: %v", d.Name, err)
	}
	return tc.waitPods(created.Spec.Selector, int(ptr.Deref(created.Spec.Replicas, 1)))
}

// waitPods waits until exactly want pods of the test's namespace match
// selector, none being deleted, and returns their names, sorted.
func (tc *testContext) waitPods(selector *metav1.LabelSelector, want int) []string {
	tc.t.Helper()
	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		tc.t.Fatal(err)
	}
	var names []string
	err = wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		pods, err := adminClient.CoreV1().Pods(tc.ns).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
		if err != nil {
			return false, err
		}
		names = names[:0]
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil {
				names = append(names, p.Name)
			}
		}
		return len(names) == want, nil
	})
	if err != nil {
		tc.t.Fatalf("waiting for %d pods matching %s in %s (%d so far): %v", want, sel, tc.ns, len(names), err)
	}
	slices.Sort(names)
	return names
}

// waitScheduled waits until every named pod of the test's namespace is bound
// and returns the node of each.
func (tc *testContext) waitScheduled(names ...string) map[string]string {
	tc.t.Helper()
	return tc.waitScheduledIn(tc.ns, names...)
}

func (tc *testContext) waitScheduledIn(ns string, names ...string) map[string]string {
	tc.t.Helper()
	placed := make(map[string]string, len(names))
	err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		for _, n := range names {
			if _, ok := placed[n]; ok {
				continue
			}
			pod, err := adminClient.CoreV1().Pods(ns).Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if pod.Spec.NodeName == "" {
				return false, nil
			}
			placed[n] = pod.Spec.NodeName
		}
		return true, nil
	})
	if err != nil {
		tc.t.Fatalf("waiting for pods %v in %s to be scheduled (bound so far: %v): %v", names, ns, placed, err)
	}
	return placed
}

// podsPerNode counts the bound pods of the test's namespace per node, with
// every node of nodes present (0 when empty).
func (tc *testContext) podsPerNode(nodes []string, keep func(*v1.Pod) bool) map[string]int {
	tc.t.Helper()
	counts := make(map[string]int, len(nodes))
	for _, n := range nodes {
		counts[n] = 0
	}
	pods, err := adminClient.CoreV1().Pods(tc.ns).List(tc.ctx, metav1.ListOptions{})
	if err != nil {
		tc.t.Fatalf("listing pods: %v", err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName != "" && (keep == nil || keep(p)) {
			counts[p.Spec.NodeName]++
		}
	}
	return counts
}

// spread is max - min of the pods per node, as the playground reports it.
func spread(counts map[string]int) int {
	return report.Spread(slices.Collect(maps.Values(counts)))
}

// schedulerConfig returns a config for the test API server, with leader
// election off, holding profiles.
func schedulerConfig(profiles ...configv1.KubeSchedulerProfile) *configv1.KubeSchedulerConfiguration {
	return testconfig.New(adminKubeconfig, profiles...)
}

// profile returns a profile for our scheduler: the defaults plus plugin at
// multiPoint with weight, then extraPlugins, and plugin's args unless args
// is nil (the plugin's defaults).
func profile(plugin string, weight int32, args runtime.Object, extraPlugins ...string) configv1.KubeSchedulerProfile {
	set := testconfig.Plugins(weight, plugin)
	set.Enabled = append(set.Enabled, testconfig.Plugins(0, extraPlugins...).Enabled...)
	p := configv1.KubeSchedulerProfile{SchedulerName: ptr.To(schedulerName), Plugins: &configv1.Plugins{MultiPoint: set}}
	if args != nil {
		p.PluginConfig = []configv1.PluginConfig{testconfig.Args(plugin, args)}
	}
	return p
}

// nodeLessPodsConfig is schedulerConfig with NodeLessPods at weight 3 and
// args (nil: its defaults), then extraPlugins.
func nodeLessPodsConfig(args *v1config.NodeLessPodsArgs, extraPlugins ...string) *configv1.KubeSchedulerConfiguration {
	var obj runtime.Object // a nil *NodeLessPodsArgs is not a nil Object
	if args != nil {
		obj = args
	}
	return schedulerConfig(profile("NodeLessPods", 3, obj, extraPlugins...))
}

// shippedConfig reads a config file of the repository, pointed at the test
// API server with leader election off.
func shippedConfig(t testing.TB, path string) *configv1.KubeSchedulerConfiguration {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := testconfig.Unmarshal(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	cfg.ClientConnection.Kubeconfig = adminKubeconfig
	cfg.LeaderElection.LeaderElect = ptr.To(false)
	return cfg
}

// writeFile writes content to a file in the test's temp dir.
func (tc *testContext) writeFile(name, content string) string {
	tc.t.Helper()
	path := filepath.Join(tc.t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		tc.t.Fatal(err)
	}
	return path
}

// setupScheduler builds a scheduler from a config file through the same code
// path as the binary (app.Setup with our plugins), without running it; it is
// stopped when the test ends.
func (tc *testContext) setupScheduler(config *configv1.KubeSchedulerConfiguration, extra ...app.Option) (*localscheduler.Scheduler, error) {
	s, err := localscheduler.Setup(tc.ctx, testconfig.Write(tc.t, config), extra...)
	if err == nil {
		tc.t.Cleanup(s.Stop)
	}
	return s, err
}

// startScheduler runs a scheduler built from config until the test ends or
// it is stopped.
func (tc *testContext) startScheduler(config *configv1.KubeSchedulerConfiguration, extra ...app.Option) *localscheduler.Scheduler {
	tc.t.Helper()
	s, err := tc.setupScheduler(config, extra...)
	if err != nil {
		tc.t.Fatalf("setting up the scheduler: %v", err)
	}
	if err := s.Start(); err != nil {
		tc.t.Fatalf("starting the scheduler: %v", err)
	}
	return s
}

// deletePod deletes a pod at once, without waiting for KWOK to stop it.
func (tc *testContext) deletePod(ns, name string) {
	tc.t.Helper()
	err := adminClient.CoreV1().Pods(ns).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	if err != nil && !apierrors.IsNotFound(err) {
		tc.t.Errorf("deleting pod %s/%s: %v", ns, name, err)
	}
}
