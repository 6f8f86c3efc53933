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

package autoscaler

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/localcluster/karpenter"
	"github.com/adminsched/scheduler-plugins/internal/testconfig"
)

// consolidationConfigFile is the shipped consolidating profile.
const consolidationConfigFile = "../../../manifests/nodelesspods/consolidation-config.yaml"

// shippedConsolidationConfig is consolidation-config.yaml as shipped,
// pointed at the cluster with leader election off, and the scheduler name
// of its profile.
func shippedConsolidationConfig(t *testing.T) (*configv1.KubeSchedulerConfiguration, string) {
	t.Helper()
	data, err := os.ReadFile(consolidationConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := testconfig.Unmarshal(data)
	if err != nil {
		t.Fatalf("%s: %v", consolidationConfigFile, err)
	}
	if len(cfg.Profiles) != 1 || cfg.Profiles[0].SchedulerName == nil {
		t.Fatalf("%s: want one profile with a schedulerName", consolidationConfigFile)
	}
	cfg.ClientConnection.Kubeconfig = cluster.KubeconfigPath
	cfg.LeaderElection.LeaderElect = ptr.To(false)
	return cfg, *cfg.Profiles[0].SchedulerName
}

// createPoolWithDefaultBudget creates np with Karpenter's default
// disruption budget (the CRD's default, nodes: 10%) instead of the 100%
// NodePool.Object sets for tests that only wait for consolidation, and
// returns the budgets the API server stored.
func (tc *testContext) createPoolWithDefaultBudget(np karpenter.NodePool) []any {
	tc.t.Helper()
	obj, err := np.Object()
	if err != nil {
		tc.t.Fatal(err)
	}
	unstructured.RemoveNestedField(obj.Object, "spec", "disruption", "budgets")
	created, err := kp.Client.Resource(karpenter.NodePoolGVR).Create(tc.ctx, obj, metav1.CreateOptions{})
	if err != nil {
		tc.t.Fatalf("creating NodePool %s: %v", np.Name, err)
	}
	tc.pools = append(tc.pools, np.Name)
	budgets, _, _ := unstructured.NestedSlice(created.Object, "spec", "disruption", "budgets")
	return budgets
}

// newWorkload is a Deployment of replicas pods for scheduler, each
// requesting cpu and 256Mi, labelled app=name. A grace period of 0: KWOK
// has no process to stop, and a terminating pod would hold its node's
// room for the scheduler until it is gone.
func (tc *testContext) newWorkload(name, scheduler, cpu string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tc.ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.PodSpec{
					SchedulerName:                 scheduler,
					TerminationGracePeriodSeconds: ptr.To[int64](0),
					Containers: []v1.Container{{
						Name:  "app",
						Image: "registry.k8s.io/pause:3.10",
						Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
							v1.ResourceCPU:    resource.MustParse(cpu),
							v1.ResourceMemory: resource.MustParse("256Mi"),
						}},
					}},
				},
			},
		},
	}
}

func (tc *testContext) createWorkload(d *appsv1.Deployment) {
	tc.t.Helper()
	if _, err := client.AppsV1().Deployments(tc.ns).Create(tc.ctx, d, metav1.CreateOptions{}); err != nil {
		tc.t.Fatalf("creating Deployment %s: %v", d.Name, err)
	}
}

func (tc *testContext) scaleWorkload(name string, replicas int32) {
	tc.t.Helper()
	patch := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas)
	if _, err := client.AppsV1().Deployments(tc.ns).Patch(tc.ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		tc.t.Fatalf("scaling Deployment %s to %d: %v", name, replicas, err)
	}
}

// waitForWorkload waits until app has exactly want pods, none terminating, all
// bound and Ready, and returns them.
func (tc *testContext) waitForWorkload(app string, want int) []v1.Pod {
	tc.t.Helper()
	var pods []v1.Pod
	tc.poll(fmt.Sprintf("%d pods of %s bound and Ready, none terminating", want, app), provisionTimeout, func(ctx context.Context) (bool, error) {
		list, err := client.CoreV1().Pods(tc.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
		if err != nil {
			return false, err
		}
		pods = list.Items
		if len(pods) != want {
			return false, nil
		}
		for i := range pods {
			if pods[i].DeletionTimestamp != nil || pods[i].Spec.NodeName == "" || !workloadPodReady(&pods[i]) {
				return false, nil
			}
		}
		return true, nil
	})
	return pods
}

func workloadPodReady(p *v1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// clusterSample is what the recorder saw at one time.
type clusterSample struct {
	at         time.Time
	readyNodes int
	// claims are the names of the NodeClaims.
	claims []string
	// disrupting NodeClaims: marked for disruption (DisruptionReason) or
	// being deleted, and not yet terminated at the provider; allowed is
	// what the 10% budget allows of the others (rounded up, as Karpenter
	// does: NodePoolStats and Budget.GetAllowedDisruptions).
	disrupting, allowed int
	reasons             map[string]string // NodeClaim -> DisruptionReason
}

// nodeRecorder samples nodes and NodeClaims every sampleInterval and watches
// the namespace's pods for evictions until stopped. It never fails the
// test itself (it runs beside it): stop returns its first error.
type nodeRecorder struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	err     error
	samples []clusterSample
	evicted map[types.UID]string // pod UID -> name, for pods that had DisruptionTarget
}

const sampleInterval = 250 * time.Millisecond

func (tc *testContext) startNodeRecorder() *nodeRecorder {
	tc.t.Helper()
	ctx, cancel := context.WithCancel(tc.ctx)
	r := &nodeRecorder{cancel: cancel, evicted: map[types.UID]string{}}
	w, err := client.CoreV1().Pods(tc.ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		cancel()
		tc.t.Fatalf("watching the pods of %s: %v", tc.ns, err)
	}
	r.wg.Add(2)
	go func() {
		defer r.wg.Done()
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.ResultChan():
				if !ok {
					r.fail(fmt.Errorf("the watch of the pods of %s ended early", tc.ns))
					return
				}
				if ev.Type == watch.Error {
					r.fail(fmt.Errorf("watching the pods of %s: %v", tc.ns, ev.Object))
					return
				}
				if p, ok := ev.Object.(*v1.Pod); ok && disruptionTarget(p) {
					r.mu.Lock()
					r.evicted[p.UID] = p.Name
					r.mu.Unlock()
				}
			}
		}
	}()
	go func() {
		defer r.wg.Done()
		tick := time.NewTicker(sampleInterval)
		defer tick.Stop()
		for {
			s, err := sampleCluster(ctx)
			if err != nil && ctx.Err() == nil {
				r.fail(err)
				return
			}
			if err == nil {
				r.mu.Lock()
				r.samples = append(r.samples, s)
				r.mu.Unlock()
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return r
}

func (r *nodeRecorder) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = err
	}
}

// stop ends the recording and returns its first error.
func (r *nodeRecorder) stop() error {
	r.cancel()
	r.wg.Wait()
	return r.err
}

// disruptionTarget says whether p has the condition the API server adds
// to a pod it evicts (and Karpenter's terminator evicts through it).
func disruptionTarget(p *v1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.DisruptionTarget && c.Status == v1.ConditionTrue {
			return true
		}
	}
	return false
}

func sampleCluster(ctx context.Context) (clusterSample, error) {
	s := clusterSample{at: time.Now(), reasons: map[string]string{}}
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return s, fmt.Errorf("listing nodes: %w", err)
	}
	for i := range nodes.Items {
		if nodeReady(&nodes.Items[i]) {
			s.readyNodes++
		}
	}
	claims, err := kp.Client.Resource(karpenter.NodeClaimGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return s, fmt.Errorf("listing NodeClaims: %w", err)
	}
	counted := 0
	for i := range claims.Items {
		c := &claims.Items[i]
		s.claims = append(s.claims, c.GetName())
		if r := disruptionReason(c); r != "" {
			s.reasons[c.GetName()] = r
		}
		if conditionTrue(c, "InstanceTerminating") {
			continue
		}
		counted++
		if c.GetDeletionTimestamp() != nil || s.reasons[c.GetName()] != "" {
			s.disrupting++
		}
	}
	s.allowed = int(math.Ceil(0.1 * float64(counted)))
	return s, nil
}

// consolidationResult is what one run of the workload cost.
type consolidationResult struct {
	NodesAtEnd int
	// NodeSeconds is the integral of Ready nodes over the window.
	NodeSeconds float64
	// NodeClaims Karpenter created in the window, and of those removed.
	ClaimsCreated, ClaimsRemoved int
	// Evicted pods: those the API server marked DisruptionTarget.
	Evicted int
	// MaxDisrupting NodeClaims at one time, against what the budget
	// allowed then; OverBudget counts the samples with more.
	MaxDisrupting, OverBudget int
	// Reasons counts Karpenter's disruption reasons over the NodeClaims.
	Reasons map[string]int
}

// summarize reduces the samples from start to end (the window).
func (r *nodeRecorder) summarize(start, end time.Time) consolidationResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	res := consolidationResult{Reasons: map[string]int{}, Evicted: len(r.evicted)}
	seen := map[string]bool{}
	reasons := map[string]string{}
	var last *clusterSample
	for i := range r.samples {
		s := &r.samples[i]
		if s.at.Before(start) || s.at.After(end) {
			continue
		}
		if last != nil {
			res.NodeSeconds += float64(last.readyNodes) * s.at.Sub(last.at).Seconds()
		}
		last = s
		for _, c := range s.claims {
			seen[c] = true
		}
		for c, reason := range s.reasons {
			reasons[c] = reason
		}
		res.MaxDisrupting = max(res.MaxDisrupting, s.disrupting)
		if s.disrupting > s.allowed {
			res.OverBudget++
		}
	}
	if last == nil {
		return res
	}
	// The last sample's count holds until the end of the window.
	res.NodeSeconds += float64(last.readyNodes) * end.Sub(last.at).Seconds()
	res.NodesAtEnd = last.readyNodes
	res.ClaimsCreated = len(seen)
	for c := range seen {
		if !slices.Contains(last.claims, c) {
			res.ClaimsRemoved++
		}
	}
	for _, reason := range reasons {
		res.Reasons[reason]++
	}
	return res
}

// nodeChanges are the times (from start) at which the number of Ready
// nodes changed, for the test's log.
func (r *nodeRecorder) nodeChanges(start time.Time) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out, prev := "", -1
	for _, s := range r.samples {
		if s.readyNodes != prev {
			out += fmt.Sprintf(" %s:%d", s.at.Sub(start).Round(100*time.Millisecond), s.readyNodes)
			prev = s.readyNodes
		}
	}
	return out
}

// TestSummarize: the figures TestConsolidationNodesSaved reports, from
// samples made up here, so that each can be seen to count.
func TestSummarize(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	sample := func(s float64, ready int, disrupting int, claims ...string) clusterSample {
		return clusterSample{at: at(s), readyNodes: ready, claims: claims, disrupting: disrupting,
			allowed: int(math.Ceil(0.1 * float64(len(claims)))), reasons: map[string]string{}}
	}
	emptied := sample(20, 2, 1, "a", "b")
	emptied.reasons["b"] = "Empty"
	for _, tt := range []struct {
		name    string
		samples []clusterSample
		evicted int
		want    consolidationResult
	}{
		{
			name:    "no sample",
			want:    consolidationResult{Reasons: map[string]int{}},
			samples: nil,
		},
		{
			// 0 nodes for 1 s, 2 for 19 s, then 1 until the end (100 s):
			// samples before the window's start are left out.
			name:    "node-seconds and claims over the window",
			samples: []clusterSample{sample(-5, 9, 0, "x"), sample(0, 0, 0), sample(1, 2, 0, "a", "b"), emptied, sample(40, 1, 0, "a")},
			evicted: 3,
			want: consolidationResult{NodesAtEnd: 1, NodeSeconds: 2*19 + 2*20 + 1*60, ClaimsCreated: 2, ClaimsRemoved: 1,
				Evicted: 3, MaxDisrupting: 1, Reasons: map[string]int{"Empty": 1}},
		},
		{
			name:    "two disrupted at once where the budget allows one",
			samples: []clusterSample{sample(0, 3, 2, "a", "b", "c"), sample(100, 3, 0, "a", "b", "c")},
			want: consolidationResult{NodesAtEnd: 3, NodeSeconds: 300, ClaimsCreated: 3,
				MaxDisrupting: 2, OverBudget: 1, Reasons: map[string]int{}},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &nodeRecorder{samples: tt.samples, evicted: map[types.UID]string{}}
			for i := range tt.evicted {
				r.evicted[types.UID(fmt.Sprint(i))] = "pod"
			}
			if diff := cmp.Diff(tt.want, r.summarize(t0, at(100))); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
		})
	}
}
