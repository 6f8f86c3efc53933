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
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/adminsched/scheduler-plugins/internal/localcluster/karpenter"
	"github.com/adminsched/scheduler-plugins/internal/testconfig"
	"github.com/adminsched/scheduler-plugins/pkg/admissionpolicy"
	odsadmission "github.com/adminsched/scheduler-plugins/pkg/ondemandshare/admission"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/controller"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/policy"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

// startDecider renders cfg's OnDemandShare policies as the controller's
// render does, applies them and waits until they are in force, then runs
// the controller in-process until the test ends, through a client that
// logs the pods it deletes and evicts.
func (tc *testContext) startDecider(cfg *configv1.KubeSchedulerConfiguration) *controllerLog {
	tc.t.Helper()
	loaded, err := admissionpolicy.LoadConfig(testconfig.Write(tc.t, cfg), func([]byte) error { return nil })
	if err != nil {
		tc.t.Fatal(err)
	}
	profiles, err := odsadmission.FromConfig(loaded)
	if err != nil {
		tc.t.Fatal(err)
	}
	res, err := odsadmission.Render(profiles, odsadmission.Options{})
	if err != nil {
		tc.t.Fatal(err)
	}
	tc.t.Cleanup(func() {
		if err := admissionpolicy.Delete(context.Background(), client, res.Pairs()); err != nil {
			tc.t.Errorf("deleting the admission policies: %v", err)
		}
	})
	if err := admissionpolicy.Apply(tc.ctx, client, res.Pairs()); err != nil {
		tc.t.Fatal(err)
	}
	if err := odsadmission.Renderer.WaitInForce(tc.ctx, client, tc.ns, provisionTimeout); err != nil {
		tc.t.Fatal(err)
	}
	policies, err := policy.Compile(profiles[0].Args)
	if err != nil {
		tc.t.Fatal(err)
	}
	log := &controllerLog{deleted: map[string]time.Time{}, evicted: map[string]time.Time{}}
	config := rest.CopyConfig(cluster.Config)
	config.QPS, config.Burst = 50, 100
	config.Wrap(log.wrap)
	cs := kubernetes.NewForConfigOrDie(config)
	ctrl, err := controller.New(cs, informers.NewSharedInformerFactory(cs, 0), policies)
	if err != nil {
		tc.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(tc.ctx)
	done := make(chan error, 1)
	go func() { done <- ctrl.Run(ctx, 2) }()
	tc.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			tc.t.Errorf("controller: %v", err)
		}
	})
	return log
}

// controllerLog is what the controller did to pods, told from what the
// other actors (Karpenter's drains, the ReplicaSet controller) do to them
// by the client it used: pod name -> when.
type controllerLog struct {
	mu               sync.Mutex
	deleted, evicted map[string]time.Time
}

var podRequest = regexp.MustCompile(`^/api/v1/namespaces/[^/]+/pods/([^/]+)(/eviction)?$`)

func (l *controllerLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err != nil || resp.StatusCode >= 300 {
			return resp, err
		}
		m := podRequest.FindStringSubmatch(req.URL.Path)
		l.mu.Lock()
		defer l.mu.Unlock()
		switch {
		case m == nil:
		case req.Method == http.MethodDelete && m[2] == "":
			l.deleted[m[1]] = time.Now()
		case req.Method == http.MethodPost && m[2] != "":
			l.evicted[m[1]] = time.Now()
		}
		return resp, err
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// counts returns how many pods the controller deleted and evicted in
// (from, to], and whether it evicted pod (any time).
func (l *controllerLog) counts(from, to time.Time) (deleted, evicted int, evictedPod func(string) bool) {
	if l == nil {
		return 0, 0, func(string) bool { return false }
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	in := func(at time.Time) bool { return at.After(from) && !at.After(to) }
	for _, at := range l.deleted {
		if in(at) {
			deleted++
		}
	}
	names := map[string]bool{}
	for name, at := range l.evicted {
		names[name] = true
		if in(at) {
			evicted++
		}
	}
	return deleted, evicted, func(name string) bool { return names[name] }
}

// claimRecord is one NodeClaim's life, as the watch saw it.
type claimRecord struct {
	created, deleted time.Time
	capacityType     string
	disrupting       bool // Karpenter marked it (DisruptionReason)
}

// churnRecorder watches the NodeClaims and the namespace's pods until
// stopped: when each NodeClaim came and went, and which pods the API
// server marked DisruptionTarget (evicted, or deleted by the pod GC), when.
type churnRecorder struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	err       error
	claims    map[string]*claimRecord
	disrupted map[string]time.Time // pod name -> when
	// changed is when a NodeClaim last came, went or was marked for
	// disruption, or a pod was evicted.
	changed time.Time
}

func (tc *testContext) startChurnRecorder() *churnRecorder {
	tc.t.Helper()
	ctx, cancel := context.WithCancel(tc.ctx)
	r := &churnRecorder{cancel: cancel, claims: map[string]*claimRecord{}, disrupted: map[string]time.Time{}}
	pods, err := client.CoreV1().Pods(tc.ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		cancel()
		tc.t.Fatalf("watching the pods of %s: %v", tc.ns, err)
	}
	claims, err := kp.Client.Resource(karpenter.NodeClaimGVR).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		pods.Stop()
		cancel()
		tc.t.Fatalf("watching NodeClaims: %v", err)
	}
	r.wg.Add(2)
	go r.follow(ctx, pods, func(ev watch.Event) {
		if p, ok := ev.Object.(*v1.Pod); ok && disruptionTarget(p) {
			if _, seen := r.disrupted[p.Name]; !seen {
				r.disrupted[p.Name] = time.Now()
				r.changed = time.Now()
			}
		}
	})
	go r.follow(ctx, claims, func(ev watch.Event) {
		c, ok := ev.Object.(*unstructured.Unstructured)
		if !ok {
			return
		}
		rec := r.claims[c.GetName()]
		if rec == nil {
			rec = &claimRecord{created: time.Now()}
			r.claims[c.GetName()] = rec
			r.changed = time.Now()
		}
		if reason := disruptionReason(c); reason != "" && !rec.disrupting {
			rec.disrupting = true
			r.changed = time.Now()
		}
		// Karpenter labels the claim with its offering's capacity type
		// once it has launched it.
		if ct := c.GetLabels()[karpenter.CapacityTypeLabel]; ct != "" {
			rec.capacityType = ct
		}
		if ev.Type == watch.Deleted {
			rec.deleted = time.Now()
			r.changed = time.Now()
		}
	})
	return r
}

// follow hands every event of w to record, under the lock, until ctx ends.
func (r *churnRecorder) follow(ctx context.Context, w watch.Interface, record func(watch.Event)) {
	defer r.wg.Done()
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			r.mu.Lock()
			switch {
			case !ok || ev.Type == watch.Error:
				if r.err == nil && ctx.Err() == nil {
					r.err = fmt.Errorf("a watch ended early: %v", ev.Object)
				}
			default:
				record(ev)
			}
			r.mu.Unlock()
			if !ok || ev.Type == watch.Error {
				return
			}
		}
	}
}

// lastChange is when the recorder last saw a change.
func (r *churnRecorder) lastChange() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changed
}

func (r *churnRecorder) stop() error {
	r.cancel()
	r.wg.Wait()
	return r.err
}

// churn is what changed in (from, to]: NodeClaims created and deleted (by
// capacity type), and the pods marked DisruptionTarget that ours did not
// evict (Karpenter's drains and consolidation).
func (r *churnRecorder) churn(from, to time.Time, ours func(string) bool) (created, deleted map[string]int, karpenterEvicted int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	in := func(at time.Time) bool { return at.After(from) && !at.After(to) }
	created, deleted = map[string]int{}, map[string]int{}
	for _, c := range r.claims {
		if in(c.created) {
			created[c.capacityType]++
		}
		if !c.deleted.IsZero() && in(c.deleted) {
			deleted[c.capacityType]++
		}
	}
	for name, at := range r.disrupted {
		if in(at) && !ours(name) {
			karpenterEvicted++
		}
	}
	return created, deleted, karpenterEvicted
}

// spotPriceFactor is the spot discount internal/localcluster/karpenter
// gives every offering (its spotFactor, KEP section 4).
const spotPriceFactor = 0.7

// hourlyCost is what node costs per hour in cost units: the on-demand price
// of its instance type, times its region's factor, times the spot discount.
func hourlyCost(n *v1.Node) float64 {
	price := 0.0
	for _, it := range karpenter.InstanceTypes {
		if it.Name == n.Labels[v1.LabelInstanceTypeStable] {
			price = it.Price
		}
	}
	for _, r := range karpenter.Regions {
		if r.Name == n.Labels[v1.LabelTopologyRegion] {
			price *= r.PriceFactor
		}
	}
	if n.Labels[karpenter.CapacityTypeLabel] == karpenter.CapacitySpot {
		price *= spotPriceFactor
	}
	return price
}

// stepReport is what one settled step of a variant looked like, and what
// it took since the previous one.
type stepReport struct {
	Step                      string
	Settled, Quiet            bool
	Replicas                  int32
	OnDemand, Spot, Pending   int
	NodesOnDemand, NodesSpot  int
	ClaimsCreated, ClaimsGone map[string]int // by capacity type
	CtrlDeleted, CtrlEvicted  int
	KarpenterEvicted          int
	CostPerHour               float64
	Took                      time.Duration
	Mismatched                []string
}

// report counts the scenario's pods and nodes now, and what changed since
// from.
func (s *shareScenario) report(step shareStep, settled bool, rec *churnRecorder, from time.Time) stepReport {
	now := time.Now()
	c := s.count()
	r := stepReport{Step: step.name, Settled: settled, Replicas: step.replicas, OnDemand: c.onDemand, Spot: c.spot,
		Pending: c.pending, Mismatched: c.mismatched}
	for _, n := range s.tc.nodes() {
		if n.DeletionTimestamp != nil {
			continue
		}
		switch n.Labels[karpenter.CapacityTypeLabel] {
		case karpenter.CapacityOnDemand:
			r.NodesOnDemand++
		case karpenter.CapacitySpot:
			r.NodesSpot++
		}
		r.CostPerHour += hourlyCost(&n)
	}
	var ours func(string) bool
	r.CtrlDeleted, r.CtrlEvicted, ours = s.ctrlLog.counts(from, now)
	r.ClaimsCreated, r.ClaimsGone, r.KarpenterEvicted = rec.churn(from, now, ours)
	return r
}

func (r stepReport) String() string {
	settled := r.state()
	return fmt.Sprintf("%s%s: %d replicas: %d on-demand (min %d), %d spot, %d pending; nodes %d on-demand, %d spot; "+
		"NodeClaims +%s -%s; evicted by the controller %d, by Karpenter %d; deleted by the controller %d; %.3f cost units/h; took %s",
		r.Step, settled, r.Replicas, r.OnDemand, share.Required(r.Replicas, 0, sharePercent), r.Spot, r.Pending,
		r.NodesOnDemand, r.NodesSpot, byType(r.ClaimsCreated), byType(r.ClaimsGone),
		r.CtrlEvicted, r.KarpenterEvicted, r.CtrlDeleted, r.CostPerHour, r.Took.Round(time.Second))
}

// state says when the step did not settle, or did not stop changing.
func (r stepReport) state() string {
	switch {
	case !r.Settled:
		return " (not settled)"
	case !r.Quiet:
		return " (still changing)"
	}
	return ""
}

// byType is "n (od o, spot s)" of counts by capacity type.
func byType(m map[string]int) string {
	total := 0
	for _, n := range m {
		total += n
	}
	return fmt.Sprintf("%d (od %d, spot %d)", total, m[karpenter.CapacityOnDemand], m[karpenter.CapacitySpot])
}

// reportTable is the variants' reports side by side, one row per step and
// variant, as a Markdown table (doc/ondemandshare-karpenter.md).
func reportTable(variants []shareVariant, results map[string][]stepReport) string {
	var b strings.Builder
	b.WriteString("| step | variant | replicas | on-demand (min) | spot | pending | nodes od/spot | NodeClaims +/- | evicted ctrl/Karpenter | deleted ctrl | cost units/h |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	steps := 0
	for _, v := range variants {
		steps = max(steps, len(results[v.name]))
	}
	for i := range steps {
		for _, v := range variants {
			if i >= len(results[v.name]) {
				continue
			}
			r := results[v.name][i]
			step := r.Step + r.state()
			fmt.Fprintf(&b, "| %s | %s | %d | %d (%d) | %d | %d | %d/%d | +%s / -%s | %d/%d | %d | %.3f |\n",
				step, v.name, r.Replicas, r.OnDemand, share.Required(r.Replicas, 0, sharePercent), r.Spot, r.Pending,
				r.NodesOnDemand, r.NodesSpot, byType(r.ClaimsCreated), byType(r.ClaimsGone),
				r.CtrlEvicted, r.KarpenterEvicted, r.CtrlDeleted, r.CostPerHour)
		}
	}
	return b.String()
}
