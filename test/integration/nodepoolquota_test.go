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
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/apis/scheduling/v1alpha1"
	"github.com/adminsched/scheduler-plugins/internal/testconfig"
	versionedv1alpha1 "github.com/adminsched/scheduler-plugins/pkg/generated/clientset/versioned/typed/scheduling/v1alpha1"
	"github.com/adminsched/scheduler-plugins/test/integration/framework"
)

const (
	// npqConfigFile is the profile this file tests, as shipped.
	npqConfigFile = "../../manifests/nodepoolquota/scheduler-config.yaml"
	npqGPU        = v1.ResourceName("nvidia.com/gpu")
	// npqPool is the quota's name, which the plugin's messages call the
	// pool, and the value of the pool label of its nodes.
	npqPool = "gpu"
	// npqRole labels the pods of one group of a test.
	npqRole = "npq-role"
)

// TestNodePoolQuotaScheduler runs bin/kube-scheduler with
// manifests/nodepoolquota/scheduler-config.yaml and the CRD of manifests/crds,
// with no quota gate: the plugin alone must hold team-a to its quota of
// nvidia.com/gpu in pool gpu through a burst, releases, limit changes, a
// scheduler crash and preemption. The subtests run one after the other: the
// quota (cluster-scoped) and the pool label are the same in each.
func TestNodePoolQuotaScheduler(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	npqInstallCRD(ctx, t)
	t.Run("burst and release", testNPQBurstAndRelease)
	t.Run("restart mid-burst", testNPQRestart)
	t.Run("preemption", testNPQPreemption)
}

// npqInstallCRD installs the CRD as installNodePoolQuotaCRD does, once the
// copy an earlier test deleted is gone: a CRD's deletion waits for its
// objects to be removed.
func npqInstallCRD(ctx context.Context, t *testing.T) {
	t.Helper()
	crds := apiextensionsclient.NewForConfigOrDie(adminConfig).ApiextensionsV1().CustomResourceDefinitions()
	name := "nodepoolquotas." + v1alpha1.GroupName
	err := wait.PollUntilContextTimeout(ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		_, err := crds.Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("CRD %s is still there (another test's, being deleted?): %v", name, err)
	}
	installNodePoolQuotaCRD(ctx, t)
}

// npqTest is one subtest's cluster: team-a is the test's namespace, team-b
// another one, both limited by the quota npqPool.
type npqTest struct {
	*testContext
	// test is the subtest, for helpers that take a *testing.T.
	test         *testing.T
	teamA, teamB string
	quotas       versionedv1alpha1.NodePoolQuotaInterface
}

func newNPQTest(t *testing.T) *npqTest {
	tc := newTestContext(t)
	return &npqTest{
		testContext: tc, test: t, teamA: tc.ns, teamB: tc.otherNamespace(),
		quotas: framework.NodePoolQuotaClient(adminConfig).SchedulingV1alpha1().NodePoolQuotas(),
	}
}

// createPool creates gpus nodes of the pool with 8 nvidia.com/gpu each and
// general nodes with none; names carry prefix (node deletion is not waited
// for between subtests).
func (e *npqTest) createPool(prefix string, gpus, general int) {
	e.t.Helper()
	var nodes []*v1.Node
	for i := range gpus {
		nodes = append(nodes, makeNode(fmt.Sprintf("%s-gpu-%d", prefix, i), withHostnameLabel(),
			withLabels(map[string]string{"pool": npqPool}), func(n *v1.Node) {
				eight := resource.MustParse("8")
				n.Status.Capacity[npqGPU], n.Status.Allocatable[npqGPU] = eight, eight
			}))
	}
	for i := range general {
		nodes = append(nodes, makeNode(fmt.Sprintf("%s-general-%d", prefix, i), withHostnameLabel(),
			withLabels(map[string]string{"pool": "general"})))
	}
	e.createNodes(nodes...)
}

// createQuota creates the quota npqPool: team-a and team-b limited to a and
// b nvidia.com/gpu on the nodes labelled pool=gpu.
func (e *npqTest) createQuota(a, b int64) {
	e.t.Helper()
	limit := func(n int64) v1.ResourceList {
		return v1.ResourceList{npqGPU: *resource.NewQuantity(n, resource.DecimalSI)}
	}
	q := &v1alpha1.NodePoolQuota{
		ObjectMeta: metav1.ObjectMeta{Name: npqPool},
		Spec: v1alpha1.NodePoolQuotaSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": npqPool}},
			Teams: []v1alpha1.TeamQuota{
				{Name: "team-a", Namespaces: []string{e.teamA}, Limits: limit(a)},
				{Name: "team-b", Namespaces: []string{e.teamB}, Limits: limit(b)},
			},
		},
	}
	if _, err := e.quotas.Create(e.ctx, q, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("creating NodePoolQuota %s: %v", npqPool, err)
	}
	e.t.Cleanup(func() { _ = e.quotas.Delete(context.Background(), npqPool, metav1.DeleteOptions{}) })
}

// setLimitA sets team-a's nvidia.com/gpu limit.
func (e *npqTest) setLimitA(n int64) {
	e.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		q, err := e.quotas.Get(e.ctx, npqPool, metav1.GetOptions{})
		if err != nil {
			return err
		}
		q.Spec.Teams[0].Limits[npqGPU] = *resource.NewQuantity(n, resource.DecimalSI)
		_, err = e.quotas.Update(e.ctx, q, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatalf("setting team-a's limit to %d: %v", n, err)
	}
}

// startScheduler runs the binary with the shipped profile, authenticated by
// kubeconfig (the admin's when ""), with the client's qps and burst when
// qps > 0, and waits until /readyz answers: the plugin has listed the
// quotas by then.
func (e *npqTest) startScheduler(name, kubeconfig string, qps float32, burst int32) *framework.Process {
	e.t.Helper()
	cfg := shippedConfig(e.t, npqConfigFile)
	if kubeconfig != "" {
		cfg.ClientConnection.Kubeconfig = kubeconfig
	}
	if qps > 0 {
		cfg.ClientConnection.QPS, cfg.ClientConnection.Burst = qps, burst
	}
	args, port := e.servingArgs()
	p := e.runBinary(name, append(args, "--config="+testconfig.Write(e.t, cfg), "--v=2")...)
	failed := e.test.Failed()
	checkReadyz(e.test, e.ctx, port)
	if p.Exited() || e.test.Failed() != failed {
		// The plugin's New waits a minute for the quotas: a scheduler
		// refused them (RBAC, no CRD) never gets ready.
		e.t.Fatalf("%s did not get ready:\n%s", name, p.Output())
	}
	return p
}

// gpuPod is a pod of ns, labelled role, asking for gpus nvidia.com/gpu (and
// makePod's cpu and memory) on the nodes labelled pool=pool.
func (e *npqTest) gpuPod(ns, name, role, pool string, gpus int64) *v1.Pod {
	p := e.makePod(name)
	p.Namespace = ns
	p.Labels[npqRole] = role
	p.Spec.NodeSelector = map[string]string{"pool": pool}
	if gpus > 0 {
		q := *resource.NewQuantity(gpus, resource.DecimalSI)
		c := &p.Spec.Containers[0]
		c.Resources.Requests[npqGPU] = q
		c.Resources.Limits = v1.ResourceList{npqGPU: q}
	}
	return p
}

// createAll creates pods at once, 20 at a time, and fails if the API server
// gated any: this test is about the plugin alone.
func (e *npqTest) createAll(pods []*v1.Pod) {
	e.t.Helper()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	sem := make(chan struct{}, 20)
	for _, p := range pods {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			created, err := adminClient.CoreV1().Pods(p.Namespace).Create(e.ctx, p, metav1.CreateOptions{})
			if err == nil && len(created.Spec.SchedulingGates) > 0 {
				err = fmt.Errorf("pod %s/%s was gated at admission (%v): a quota gate policy is installed", p.Namespace, p.Name, created.Spec.SchedulingGates)
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		e.t.Fatalf("creating %d pods: %d failed, first: %v", len(pods), len(errs), errs[0])
	}
}

// npqState is the pods of one role: bound (by name, with UID) and pending.
type npqState struct {
	bound   map[string]types.UID
	pending []*v1.Pod
}

func (e *npqTest) state(ns, role string) (npqState, error) {
	pods, err := adminClient.CoreV1().Pods(ns).List(e.ctx, metav1.ListOptions{LabelSelector: npqRole + "=" + role})
	if err != nil {
		return npqState{}, err
	}
	s := npqState{bound: map[string]types.UID{}}
	for i := range pods.Items {
		p := &pods.Items[i]
		switch {
		case p.DeletionTimestamp != nil:
		case p.Spec.NodeName != "":
			s.bound[p.Name] = p.UID
		default:
			s.pending = append(s.pending, p)
		}
	}
	return s, nil
}

func (e *npqTest) mustState(ns, role string) npqState {
	e.t.Helper()
	s, err := e.state(ns, role)
	if err != nil {
		e.t.Fatalf("listing the pods of %s: %v", role, err)
	}
	return s
}

// rejection is the PodScheduled=False message of a pending pod, "" while
// the scheduler has not tried it.
func rejection(p *v1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
			return c.Message
		}
	}
	return ""
}

// settle waits until want pods of role are bound and every other one was
// tried and rejected, or the wait times out, and returns the state then.
// It returns early, with more bound, when the scheduler binds past want.
func (e *npqTest) settle(ns, role string, want int) npqState {
	e.t.Helper()
	var s npqState
	_ = wait.PollUntilContextTimeout(e.ctx, pollInterval, waitTimeout, true, func(context.Context) (bool, error) {
		var err error
		if s, err = e.state(ns, role); err != nil {
			return false, err
		}
		if len(s.bound) < want {
			return false, nil
		}
		for _, p := range s.pending {
			if rejection(p) == "" {
				return false, nil
			}
		}
		return true, nil
	})
	return s
}

// waitBound waits until want pods of role are bound and returns how long
// that took, or fails.
func (e *npqTest) waitBound(ns, role string, want int) time.Duration {
	e.t.Helper()
	start := time.Now()
	var got int
	err := wait.PollUntilContextTimeout(e.ctx, 20*time.Millisecond, waitTimeout, true, func(context.Context) (bool, error) {
		s, err := e.state(ns, role)
		got = len(s.bound)
		return err == nil && got >= want, err
	})
	if err != nil {
		e.t.Fatalf("waiting for %d bound pods of %s (%d so far): %v", want, role, got, err)
	}
	return time.Since(start)
}

// sampler counts the bound pods of one role every 50 ms until stopped: the
// highest count seen and when the count changed.
type sampler struct {
	stop  chan struct{}
	done  chan struct{}
	start time.Time
	max   int
	// changes are "+elapsed:count" each time the count changed.
	changes []string
}

func (e *npqTest) sample(ns, role string) *sampler {
	s := &sampler{stop: make(chan struct{}), done: make(chan struct{}), start: time.Now()}
	go func() {
		defer close(s.done)
		last := -1
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			if st, err := e.state(ns, role); err == nil {
				n := len(st.bound)
				s.max = max(s.max, n)
				if n != last {
					s.changes = append(s.changes, fmt.Sprintf("+%v:%d", time.Since(s.start).Round(10*time.Millisecond), n))
					last = n
				}
			}
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// finish stops the sampler and returns the highest count seen.
func (s *sampler) finish() int {
	close(s.stop)
	<-s.done
	return s.max
}

// checkHeld checks that exactly want pods of role are bound, and, unless
// wantMsg is "", that every pending one says why: the team is at its limit.
func (e *npqTest) checkHeld(s npqState, role string, want int, wantMsg string) {
	e.t.Helper()
	if len(s.bound) != want {
		e.t.Errorf("%s: %d pods bound, want exactly %d (the quota)", role, len(s.bound), want)
	}
	if wantMsg == "" {
		return
	}
	var wrong []string
	for _, p := range s.pending {
		if msg := rejection(p); !strings.Contains(msg, wantMsg) {
			wrong = append(wrong, fmt.Sprintf("%s: %q", p.Name, msg))
		}
	}
	if len(wrong) > 0 {
		e.t.Errorf("%s: %d of %d pending pods are not held by the quota (want PodScheduled=False with %q); first: %s",
			role, len(wrong), len(s.pending), wantMsg, wrong[0])
	}
}

// holds waits d, then checks that the bound pods of role are exactly
// before: none evicted, none added.
func (e *npqTest) holds(ns, role string, before map[string]types.UID, d time.Duration, why string) {
	e.t.Helper()
	time.Sleep(d)
	after := e.mustState(ns, role).bound
	for name, uid := range before {
		if after[name] != uid {
			e.t.Errorf("%s: bound pod %s is gone", why, name)
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			e.t.Errorf("%s: pod %s was bound", why, name)
		}
	}
}

// testNPQBurstAndRelease: 100 one-GPU pods of team-a at once against a
// quota of 10 in a pool of 32 GPUs, the scheduler running as the
// ServiceAccount of manifests/install (its ClusterRole must let the plugin
// read the quotas); then releases and limit changes.
func testNPQBurstAndRelease(t *testing.T) {
	e := newNPQTest(t)
	e.createPool("npq-burst", 4, 2)
	e.createQuota(10, 4)
	in := e.install()
	proc := e.startScheduler("npq-scheduler", in.kubeconfig, 0, 0)

	var pods []*v1.Pod
	for i := range 100 {
		pods = append(pods, e.gpuPod(e.teamA, fmt.Sprintf("a-gpu-%d", i), "a-gpu", npqPool, 1))
	}
	for i := range 4 {
		pods = append(pods, e.gpuPod(e.teamB, fmt.Sprintf("b-gpu-%d", i), "b-gpu", npqPool, 1))
	}
	for i := range 5 {
		pods = append(pods, e.gpuPod(e.teamA, fmt.Sprintf("a-cpu-%d", i), "a-cpu", "general", 0))
	}
	samples := e.sample(e.teamA, "a-gpu")
	start := time.Now()
	e.createAll(pods)
	s := e.settle(e.teamA, "a-gpu", 10)
	settled := time.Since(start)
	const held = "team team-a uses 10 of 10 nvidia.com/gpu in pool gpu"
	e.checkHeld(s, "a-gpu", 10, held)
	e.holds(e.teamA, "a-gpu", s.bound, 2*time.Second, "after the burst")
	peak := samples.finish()
	t.Logf("burst: %d of 100 bound, %d pending, settled in %v, at most %d bound at any sample; bound over time: %s",
		len(s.bound), len(s.pending), settled.Round(10*time.Millisecond), peak, strings.Join(samples.changes, " "))
	if peak > 10 {
		t.Errorf("burst: %d pods were bound at one sample, above the limit of 10", peak)
	}
	if b := e.mustState(e.teamB, "b-gpu"); len(b.bound) != 4 {
		t.Errorf("team-b: %d of 4 pods bound, want all (its own quota of 4)", len(b.bound))
	}
	if c := e.mustState(e.teamA, "a-cpu"); len(c.bound) != 5 {
		t.Errorf("team-a off the pool: %d of 5 pods bound, want all (no quota there)", len(c.bound))
	}
	if len(s.pending) > 0 {
		if msg := e.failedSchedulingMessage(s.pending[0].Name); !strings.Contains(msg, held) {
			t.Errorf("FailedScheduling of %s says %q, want %q", s.pending[0].Name, msg, held)
		}
	}
	if t.Failed() {
		return
	}

	// Release: 3 bound pods deleted, 3 held ones take their place.
	var freed []string
	for name := range s.bound {
		if len(freed) < 3 {
			freed = append(freed, name)
		}
	}
	for _, name := range freed {
		e.deletePod(e.teamA, name)
	}
	took := e.waitBound(e.teamA, "a-gpu", 10)
	s = e.settle(e.teamA, "a-gpu", 10)
	e.checkHeld(s, "a-gpu", 10, held)
	e.holds(e.teamA, "a-gpu", s.bound, 2*time.Second, "after the release")
	t.Logf("release: 3 deleted, 3 held pods bound %v after the deletion", took.Round(10*time.Millisecond))

	// The limit raised to 12: 2 more.
	e.setLimitA(12)
	took = e.waitBound(e.teamA, "a-gpu", 12)
	s = e.settle(e.teamA, "a-gpu", 12)
	// The held pods' messages still say 10 of 10 until their backoff
	// ends and they are tried again: only the count is checked.
	e.checkHeld(s, "a-gpu", 12, "")
	e.holds(e.teamA, "a-gpu", s.bound, 2*time.Second, "after the limit rose to 12")
	t.Logf("limit 10 -> 12: 2 more bound %v after the update", took.Round(10*time.Millisecond))

	// The limit lowered to 5: the plugin evicts nothing and binds nothing.
	e.setLimitA(5)
	e.holds(e.teamA, "a-gpu", s.bound, 3*time.Second, "after the limit fell to 5")
	if lines := forbidden.FindAllString(proc.Output(), -1); len(lines) > 0 {
		t.Errorf("the scheduler running as manifests/install's ServiceAccount was refused %d times (first: %q): its ClusterRole misses something",
			len(lines), lines[0])
	}
}

// testNPQRestart kills the scheduler after its first bindings of a burst
// and starts it again: the new one counts what the first bound, and the
// team ends exactly at its limit, never above it at any sample. The
// client is slowed to 10 requests/s so that the burst's bindings, queued
// behind the rejections' status updates, take seconds.
func testNPQRestart(t *testing.T) {
	e := newNPQTest(t)
	e.createPool("npq-restart", 4, 0)
	e.createQuota(10, 4)
	first := e.startScheduler("npq-scheduler-1", "", 10, 2)

	var pods []*v1.Pod
	for i := range 100 {
		pods = append(pods, e.gpuPod(e.teamA, fmt.Sprintf("a-gpu-%d", i), "a-gpu", npqPool, 1))
	}
	samples := e.sample(e.teamA, "a-gpu")
	e.createAll(pods)
	e.waitBound(e.teamA, "a-gpu", 3)
	first.Kill()
	atKill := len(e.mustState(e.teamA, "a-gpu").bound)
	e.startScheduler("npq-scheduler-2", "", 10, 2)
	s := e.settle(e.teamA, "a-gpu", 10)
	e.checkHeld(s, "a-gpu", 10, "team team-a uses 10 of 10 nvidia.com/gpu in pool gpu")
	e.holds(e.teamA, "a-gpu", s.bound, 2*time.Second, "after the restart")
	peak := samples.finish()
	t.Logf("restart: killed with %d bound, %d bound at the end, at most %d at any sample; bound over time: %s",
		atKill, len(s.bound), peak, strings.Join(samples.changes, " "))
	if atKill >= 10 {
		t.Logf("restart: the first scheduler had bound all %d before it was killed: not mid-burst this time", atKill)
	}
	if peak > 10 {
		t.Errorf("restart: %d pods were bound at one sample, above the limit of 10", peak)
	}
}

// testNPQPreemption: team-a at its quota (4 low-priority pods) and team-b
// at its own with lower priority still, in a pool with room for both
// twice over. A high-priority team-a pod can only have team-a's room:
// preemption evicts exactly one low-priority team-a pod and no team-b pod.
func testNPQPreemption(t *testing.T) {
	e := newNPQTest(t)
	e.createPool("npq-preempt", 2, 0)
	e.createQuota(4, 4)
	e.startScheduler("npq-scheduler", "", 0, 0)
	// The cluster runs without the Priority admission plugin: pods carry
	// their priority themselves.
	prio := map[string]int32{"lowest": 10, "low": 100, "high": 1000}
	pod := func(ns, name, role, level string) *v1.Pod {
		p := e.gpuPod(ns, name, role, npqPool, 1)
		p.Spec.Priority = ptr.To(prio[level])
		return p
	}

	var pods []*v1.Pod
	for i := range 4 {
		pods = append(pods, pod(e.teamB, fmt.Sprintf("b-lowest-%d", i), "b-lowest", "lowest"),
			pod(e.teamA, fmt.Sprintf("a-low-%d", i), "a-low", "low"))
	}
	e.createAll(pods)
	e.waitBound(e.teamB, "b-lowest", 4)
	e.waitBound(e.teamA, "a-low", 4)
	low, lowest := e.mustState(e.teamA, "a-low").bound, e.mustState(e.teamB, "b-lowest").bound

	e.createAll([]*v1.Pod{pod(e.teamA, "a-high", "a-high", "high")})
	took := e.waitBound(e.teamA, "a-high", 1)
	after := e.mustState(e.teamA, "a-low").bound
	var victims []string
	for name, uid := range low {
		if after[name] != uid {
			victims = append(victims, name)
		}
	}
	slices.Sort(victims)
	t.Logf("preemption: a-high bound %v after its creation; team-a victims %v", took.Round(10*time.Millisecond), victims)
	if len(victims) != 1 {
		t.Errorf("team-a's low-priority pods evicted: %v, want exactly one (the quota of 4 was full, the pool had room)", victims)
	}
	e.holds(e.teamB, "b-lowest", lowest, 0, "team-b, lower priority than both, has no room to give team-a")
}
