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
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	v1config "github.com/adminsched/scheduler-plugins/apis/config/v1"
	"github.com/adminsched/scheduler-plugins/internal/localcluster/karpenter"
	"github.com/adminsched/scheduler-plugins/internal/testconfig"
	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

const (
	// shareApp is the Deployment of the scenario; 500m: three pods fill a
	// c-2x node (1900m allocatable).
	shareApp        = "web"
	shareCPU        = "500m"
	sharePercent    = 30
	spreadLabel     = "capacity-spread"
	spotWaitTimeout = 30 * time.Second
	recoveryEvery   = 20 * time.Second
	// shareOffEnv runs the OnDemandShare variant without its admission
	// policy and controller, to see its share assertion fail.
	shareOffEnv = "AUTOSCALER_ONDEMANDSHARE_OFF"
)

// shareVariant is one way of keeping an on-demand share with Karpenter.
type shareVariant struct {
	name  string
	pools []karpenter.NodePool // the spot one is named spot
	// decide applies the rendered admission policy and runs the
	// controller; spread gives the Deployment the workaround's topology
	// spread constraint.
	decide, spread bool
	// assert checks the share and the classes at every settled step.
	assert bool
}

// capacityPools are a spot pool, preferred (weight) as a platform prefers
// the cheaper capacity, and an on-demand pool; spread labels each node
// with a capacity-spread value of its pool's (the workaround's).
func capacityPools(spread bool) []karpenter.NodePool {
	spot, onDemand := karpenter.CapacityTypeNodePool(karpenter.CapacitySpot), karpenter.CapacityTypeNodePool(karpenter.CapacityOnDemand)
	spot.Weight = 10
	if spread {
		spot.Requirements = append(spot.Requirements, v1.NodeSelectorRequirement{Key: spreadLabel, Operator: v1.NodeSelectorOpIn, Values: []string{"2", "3", "4", "5"}})
		onDemand.Requirements = append(onDemand.Requirements, v1.NodeSelectorRequirement{Key: spreadLabel, Operator: v1.NodeSelectorOpIn, Values: []string{"1"}})
	}
	return []karpenter.NodePool{spot, onDemand}
}

// shareStep changes the Deployment (or the spot capacity), then the
// scenario waits until it has replicas pods, all bound and Ready.
type shareStep struct {
	name     string
	replicas int32
	act      func(s *shareScenario)
	// quiet, after a step that leaves Karpenter something to consolidate,
	// waits at most that long until nothing changed for quietWindow, then
	// settles again; a step that keeps changing is reported as such.
	quiet time.Duration
}

// quietWindow covers the start of a consolidation: consolidateAfter 5 s, up
// to 10 s until Karpenter's disruption loop looks, 15 s validation, before
// it marks a NodeClaim.
const quietWindow = 40 * time.Second

// TestOnDemandShareWithKarpenter is the Karpenter proof of OnDemandShare
// (kep/46-on-demand-share/README.md section 7 item 9): a Deployment with a
// 30% on-demand minimum, next to a preferred spot NodePool and an
// on-demand one, scales 0 -> 10 -> 20 -> 5 and loses its spot capacity
// (the spot pool's NodeClaims deleted and its cpu limit set to 0, which
// blocks spot launches: KEP section 4). At every settled step at least
// ceil(30%) of the replicas run on on-demand nodes, and every pod's node
// was launched with the capacity type its decided class asks for. Each step
// reports replicas, nodes, evictions, NodeClaim churn and cost.
//
// AUTOSCALER_LONG=1 adds a rollout and the return of spot (the limit
// restored, scaled to 10), and runs Karpenter's documented workaround
// (section 5: capacity-spread labels and a topology spread constraint, no
// OnDemandShare) through the same steps beside it, reported, not asserted.
// AUTOSCALER_ONDEMANDSHARE_OFF=1 runs the OnDemandShare variant without its
// admission policy and controller: its assertions then fail.
func TestOnDemandShareWithKarpenter(t *testing.T) {
	if !kubeversion.Has(kubeversion.MutatingAdmissionPolicyV1) {
		t.Skipf("%s", kubeversion.Unavailable(kubeversion.MutatingAdmissionPolicyV1).Error())
	}
	long := os.Getenv("AUTOSCALER_LONG") != ""
	quiet := 75 * time.Second
	if long {
		quiet = 3 * time.Minute
	}
	variants := []shareVariant{{name: "OnDemandShare", pools: capacityPools(false), decide: os.Getenv(shareOffEnv) == "", assert: true}}
	if long {
		variants = append(variants, shareVariant{name: "workaround", pools: capacityPools(true), spread: true})
	} else {
		t.Logf("OnDemandShare through scale and spot loss only; set AUTOSCALER_LONG=1 for the rollout, spot's return and the workaround")
	}
	steps := []shareStep{
		{name: "0->10", replicas: 10, act: func(s *shareScenario) { s.tc.createWorkload(s.deployment(10)) }},
		{name: "10->20", replicas: 20, act: func(s *shareScenario) { s.tc.scaleWorkload(shareApp, 20) }},
		{name: "20->5", replicas: 5, act: func(s *shareScenario) { s.tc.scaleWorkload(shareApp, 5) }, quiet: quiet},
	}
	if long {
		steps = append(steps, shareStep{name: "rollout", replicas: 5, act: (*shareScenario).rollout})
	}
	steps = append(steps, shareStep{name: "spot lost", replicas: 5, act: (*shareScenario).loseSpot, quiet: quiet})
	if long {
		steps = append(steps, shareStep{name: "spot back, 5->10", replicas: 10, act: (*shareScenario).spotBack, quiet: quiet})
		for i := range steps {
			steps[i].quiet = quiet
		}
	}
	results := map[string][]stepReport{}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			results[v.name] = runShareScenario(t, v, steps)
		})
	}
	t.Logf("side by side (%d%% minimum on-demand):\n%s", sharePercent, reportTable(variants, results))
}

// shareScenario is one variant's run.
type shareScenario struct {
	tc      *testContext
	v       shareVariant
	ctrlLog *controllerLog
}

func runShareScenario(t *testing.T, v shareVariant, steps []shareStep) []stepReport {
	tc := newTestContext(t)
	for _, np := range v.pools {
		tc.createNodePool(np)
	}
	cfg := defaultProfileConfig()
	if v.assert {
		cfg = testconfig.New(cluster.KubeconfigPath, configv1.KubeSchedulerProfile{
			SchedulerName: ptr.To(schedulerName),
			PluginConfig: []configv1.PluginConfig{testconfig.Args("OnDemandShare", &v1config.OnDemandShareArgs{Policies: []v1config.OnDemandSharePolicy{{
				Name:               "web",
				Namespaces:         []string{tc.ns},
				MinOnDemandPercent: ptr.To[int32](sharePercent),
				SpotWaitTimeout:    &metav1.Duration{Duration: spotWaitTimeout},
				Recovery:           &v1config.SpotRecovery{Interval: &metav1.Duration{Duration: recoveryEvery}, MaxPodsPerInterval: ptr.To[int32](2)},
			}}})},
		})
	}
	tc.startScheduler(cfg)
	s := &shareScenario{tc: tc, v: v}
	if v.decide {
		s.ctrlLog = tc.startDecider(cfg)
	} else if v.assert {
		t.Logf("%s is set: no admission policy, no controller", shareOffEnv)
	}
	rec := tc.startChurnRecorder()
	defer func() { _ = rec.stop() }()

	var reports []stepReport
	last := time.Now()
	for _, step := range steps {
		start := time.Now()
		step.act(s)
		settled, quiet := s.settle(step.replicas), true
		if settled && step.quiet > 0 {
			quiet = s.waitQuiet(rec, step.quiet)
			settled = s.settle(step.replicas)
		}
		r := s.report(step, settled, rec, last)
		r.Quiet = quiet
		r.Took = time.Since(start)
		last = time.Now()
		reports = append(reports, r)
		t.Logf("%s", r)
		if v.assert {
			s.check(r)
		}
	}
	if err := rec.stop(); err != nil {
		t.Error(err)
	}
	return reports
}

// deployment is the scenario's workload: the workaround's adds its
// topology spread; rollouts keep every replica (maxUnavailable 0).
func (s *shareScenario) deployment(replicas int32) *appsv1.Deployment {
	d := s.tc.newWorkload(shareApp, schedulerName, shareCPU, replicas)
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
		MaxUnavailable: ptr.To(intstr.FromInt32(0)), MaxSurge: ptr.To(intstr.FromString("25%")),
	}}
	if s.v.spread {
		d.Spec.Template.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: spreadLabel, WhenUnsatisfiable: v1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: d.Spec.Selector.MatchLabels},
		}}
	}
	return d
}

func (s *shareScenario) rollout() {
	patch := []byte(`{"spec":{"template":{"metadata":{"annotations":{"version":"2"}}}}}`)
	if _, err := client.AppsV1().Deployments(s.tc.ns).Patch(s.tc.ctx, shareApp, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		s.tc.t.Fatalf("rolling out %s: %v", shareApp, err)
	}
}

// loseSpot blocks spot launches (cpu limit 0), deletes the spot NodeClaims
// and waits until their nodes are gone (Karpenter drained them).
func (s *shareScenario) loseSpot() {
	s.patchSpotPool(`{"spec":{"limits":{"cpu":"0"}}}`)
	spotPool := metav1.ListOptions{LabelSelector: karpenter.NodePoolLabel + "=" + karpenter.CapacitySpot}
	if err := kp.Client.Resource(karpenter.NodeClaimGVR).DeleteCollection(s.tc.ctx, metav1.DeleteOptions{}, spotPool); err != nil {
		s.tc.t.Fatalf("deleting the spot NodeClaims: %v", err)
	}
	s.tc.poll("the spot nodes to be gone", provisionTimeout, func(ctx context.Context) (bool, error) {
		nodes, err := client.CoreV1().Nodes().List(ctx, spotPool)
		return err == nil && len(nodes.Items) == 0, err
	})
}

// spotBack lifts the limit and scales up: Karpenter adds spot for the new
// spot replicas, which also gives recovery a spot node to move fallback
// pods to.
func (s *shareScenario) spotBack() {
	s.patchSpotPool(`{"spec":{"limits":null}}`)
	s.tc.scaleWorkload(shareApp, 10)
}

func (s *shareScenario) patchSpotPool(patch string) {
	if _, err := kp.Client.Resource(karpenter.NodePoolGVR).Patch(s.tc.ctx, karpenter.CapacitySpot, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		s.tc.t.Fatalf("patching the spot NodePool with %s: %v", patch, err)
	}
}

// settle waits until the Deployment is rolled out with replicas pods, none
// gated or terminating, all bound and Ready. A variant that asserts fails
// when it does not; the others report it.
func (s *shareScenario) settle(replicas int32) bool {
	s.tc.t.Helper()
	ok := false
	timeout := provisionTimeout
	if !s.v.assert {
		timeout = time.Minute
	}
	deadline := time.Now().Add(timeout)
	for !ok && time.Now().Before(deadline) {
		d, err := client.AppsV1().Deployments(s.tc.ns).Get(s.tc.ctx, shareApp, metav1.GetOptions{})
		if err != nil {
			s.tc.t.Fatal(err)
		}
		st := d.Status
		ok = st.ObservedGeneration >= d.Generation && st.Replicas == replicas && st.UpdatedReplicas == replicas && st.AvailableReplicas == replicas
		if ok {
			c := s.count()
			ok = c.replicas == int(replicas) && c.pending == 0 && c.gated == 0
		}
		if err := kp.Err(); err != nil {
			s.tc.t.Fatal(err)
		}
		time.Sleep(pollInterval)
	}
	if !ok && s.v.assert {
		s.tc.t.Fatalf("%d replicas did not settle in %s: %+v", replicas, timeout, s.count())
	}
	return ok
}

// waitQuiet waits until rec saw no change for quietWindow, at most for
// limit, and says whether it did.
func (s *shareScenario) waitQuiet(rec *churnRecorder, limit time.Duration) bool {
	since := time.Now()
	for time.Since(since) < limit {
		last := rec.lastChange()
		if last.Before(since) {
			last = since
		}
		if time.Since(last) >= quietWindow {
			return true
		}
		if err := kp.Err(); err != nil {
			s.tc.t.Fatal(err)
		}
		time.Sleep(pollInterval)
	}
	return false
}

// shareCount is where the Deployment's live pods run.
type shareCount struct {
	replicas, onDemand, spot, pending, gated int
	// mismatched are pods whose node's NodeClaim has another capacity type
	// than the class decided for them.
	mismatched []string
}

func (s *shareScenario) count() shareCount {
	var c shareCount
	capacityOf := map[string]string{} // node -> its NodeClaim's capacity type
	for _, nc := range s.tc.nodeClaims() {
		node, _, _ := unstructured.NestedString(nc.Object, "status", "nodeName")
		capacityOf[node] = nc.GetLabels()[karpenter.CapacityTypeLabel]
	}
	nodeClass := map[string]string{}
	for _, n := range s.tc.nodes() {
		nodeClass[n.Name] = n.Labels[karpenter.CapacityTypeLabel]
	}
	for _, p := range s.tc.namespacePods() {
		if p.DeletionTimestamp != nil || p.Labels["app"] != shareApp {
			continue
		}
		c.replicas++
		if len(p.Spec.SchedulingGates) > 0 {
			c.gated++
		}
		if p.Spec.NodeName == "" || !workloadPodReady(&p) {
			c.pending++
			continue
		}
		switch nodeClass[p.Spec.NodeName] {
		case karpenter.CapacityOnDemand:
			c.onDemand++
		case karpenter.CapacitySpot:
			c.spot++
		}
		if class := p.Labels[share.ClassLabel]; class != capacityOf[p.Spec.NodeName] {
			c.mismatched = append(c.mismatched, fmt.Sprintf("%s: class %q, its node's NodeClaim %q", p.Name, class, capacityOf[p.Spec.NodeName]))
		}
	}
	return c
}

// check asserts the share and the classes at a settled step.
func (s *shareScenario) check(r stepReport) {
	t := s.tc.t
	t.Helper()
	if want := int(share.Required(r.Replicas, 0, sharePercent)); r.OnDemand < want {
		t.Errorf("%s: %d of %d replicas on on-demand nodes, want at least %d (%d%%)", r.Step, r.OnDemand, r.Replicas, want, sharePercent)
	}
	if len(r.Mismatched) > 0 {
		t.Errorf("%s: pods on a node Karpenter launched with another capacity type than their class: %s", r.Step, strings.Join(r.Mismatched, "; "))
	}
}
