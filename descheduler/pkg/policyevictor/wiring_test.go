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

package policyevictor

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"
	frameworkfake "sigs.k8s.io/descheduler/pkg/framework/fake"

	configv1 "github.com/adminsched/scheduler-plugins/apis/config/v1"
)

// newFromConfig builds the evictor with New, from testdata's scheduler
// config, so that the scheduler plugins' own matching code decides.
func newFromConfig(t *testing.T, objs ...runtime.Object) *PolicyEvictor {
	t.Helper()
	return newFromArgs(t, &PolicyEvictorArgs{SchedulerConfig: testConfig}, objs...)
}

func newFromArgs(t *testing.T, args *PolicyEvictorArgs, objs ...runtime.Object) *PolicyEvictor {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	getPods, err := podutil.BuildGetPodsAssignedToNodeFunc(factory.Core().V1().Pods().Informer())
	if err != nil {
		t.Fatal(err)
	}
	Default(args)
	pl, err := New(ctx, args, &frameworkfake.HandleImpl{ClientsetImpl: client, SharedInformerFactoryImpl: factory,
		GetPodsAssignedToNodeFuncImpl: getPods})
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return pl.(*PolicyEvictor)
}

func region(r string) map[string]string { return map[string]string{"topology.kubernetes.io/region": r} }

func TestWiredRequireRule(t *testing.T) {
	p := pod("pay", "eu1", 1000, nil)
	p.Namespace = "payments"
	e := newFromConfig(t, node("eu1", 10, region("eu-west-1")), node("us1", 10, region("us-east-1")), p)
	expect(t, e, p, false, reasonPlacementPolicy)
	e = newFromConfig(t, node("eu1", 10, region("eu-west-1")), node("us1", 10, region("us-east-1")),
		node("eu2", 10, region("eu-west-1")), p)
	expect(t, e, p, true, "")
}

func TestWiredWindows(t *testing.T) {
	now := time.Now()
	open := node("n2", 10, nil)
	open.Annotations = map[string]string{configv1.DefaultMaintenanceWindowAnnotation: now.Add(-time.Hour).UTC().Format(time.RFC3339) +
		"/" + now.Add(time.Hour).UTC().Format(time.RFC3339)}
	p := pod("web", "n1", 1000, nil)
	exempt := pod("batch", "n1", 1000, map[string]string{"maintenance": "exempt"})
	e := newFromConfig(t, node("n1", 10, nil), open, p, exempt)
	expect(t, e, p, false, reasonWindow)
	expect(t, e, exempt, true, "")
	if !e.Filter(exempt) || e.Filter(p) {
		t.Fatal("Filter: want the exempt pod through and the other refused")
	}
}

// A profile that runs neither plugin has nothing to enforce: the shipped
// policies must start with a NodeLessPods-only install and let evictions
// through.
func TestWiredProfileWithoutPolicies(t *testing.T) {
	p := pod("pay", "eu1", 1000, nil)
	p.Namespace = "payments"
	e := newFromArgs(t, &PolicyEvictorArgs{SchedulerConfig: testConfig, SchedulerName: "default-scheduler"},
		node("eu1", 10, region("eu-west-1")), p)
	if e.placement != nil || e.windows != nil {
		t.Fatalf("placement %v, windows %v: want none", e.placement, e.windows)
	}
	expect(t, e, p, true, "")
}
