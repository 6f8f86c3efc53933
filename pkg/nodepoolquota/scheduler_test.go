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

package nodepoolquota

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	clientsetfake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	kubeschedulerv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	configtesting "k8s.io/kubernetes/pkg/scheduler/apis/config/testing"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/profile"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
)

// bindDelay is how long the fake API server takes to show a binding: in
// between, only the scheduler's assumed pods know of it.
const bindDelay = time.Second

// TestInTheScheduler runs the plugin in kube-scheduler's own loop (the
// default plugins, batching on) on a fake API server that shows bindings a
// second late: 30 one-GPU pods of team-a pinned to pool h100 against a
// quota of 10 bind exactly 10; raising the quota to 14 binds 4 more; and
// deleting 2 bound pods of team-a binds 2 more.
func TestInTheScheduler(t *testing.T) {
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(2)))
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	defer cancel()

	var objs []runtime.Object
	for _, name := range []string{"h1", "h2", "g1"} {
		pool := "h100"
		if name == "g1" {
			pool = "general"
		}
		objs = append(objs, st.MakeNode().Name(name).Label("pool", pool).
			Capacity(map[v1.ResourceName]string{v1.ResourcePods: "110", v1.ResourceCPU: "64", v1.ResourceMemory: "256Gi", gpu: "16"}).Obj())
	}
	objs = append(objs, namespace("a-1"))
	cs := clientsetfake.NewClientset(objs...)
	var wg sync.WaitGroup
	defer wg.Wait()
	cs.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "binding" {
			return false, nil, nil
		}
		b := action.(clienttesting.CreateAction).GetObject().(*v1.Binding).DeepCopy()
		wg.Go(func() {
			select {
			case <-ctx.Done():
				return
			case <-time.After(bindDelay):
			}
			patch := fmt.Sprintf(`{"spec":{"nodeName":%q}}`, b.Target.Name)
			if _, err := cs.CoreV1().Pods(b.Namespace).Patch(context.Background(), b.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				t.Errorf("binding %s: %v", b.Name, err)
			}
		})
		return true, b, nil
	})

	quotas := quotaClient(true, h100("10"))
	factory := func(ctx context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		return newWithClient(ctx, h, quotas)
	}
	cfg := configtesting.V1ToInternalWithDefaults(t, kubeschedulerv1.KubeSchedulerConfiguration{Profiles: []kubeschedulerv1.KubeSchedulerProfile{{
		SchedulerName: ptrTo(v1.DefaultSchedulerName),
		Plugins:       &kubeschedulerv1.Plugins{MultiPoint: kubeschedulerv1.PluginSet{Enabled: []kubeschedulerv1.Plugin{{Name: Name}}}},
	}}})
	informerFactory := informers.NewSharedInformerFactory(cs, 0)
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	defer broadcaster.Shutdown()
	sched, err := scheduler.New(ctx, cs, informerFactory, nil, profile.NewRecorderFactory(broadcaster),
		scheduler.WithProfiles(cfg.Profiles...),
		scheduler.WithFrameworkOutOfTreeRegistry(frameworkruntime.Registry{Name: factory}))
	if err != nil {
		t.Fatal(err)
	}
	informerFactory.Start(ctx.Done())
	informerFactory.WaitForCacheSync(ctx.Done())
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); sched.Run(ctx) }()
	defer func() { cancel(); <-done; informerFactory.Shutdown() }()

	for i := range 30 {
		pod := gpuPod(fmt.Sprintf("p%02d", i), "a-1", 1, 0)
		pod.Spec.NodeSelector = map[string]string{"pool": "h100"}
		pod.Spec.SchedulerName = v1.DefaultSchedulerName // the API server would default it
		if _, err := cs.CoreV1().Pods("a-1").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	bound := func() []string {
		list, err := cs.CoreV1().Pods("a-1").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range list.Items {
			if p.Spec.NodeName != "" {
				names = append(names, p.Name)
			}
		}
		return names
	}
	// expect waits for want bound pods, then checks that no more bind for
	// three binding delays: the scheduler had time to overshoot.
	expect := func(step string, want int) {
		t.Helper()
		_ = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			return len(bound()) >= want, nil
		})
		time.Sleep(3 * bindDelay)
		if got := bound(); len(got) != want {
			t.Fatalf("%s: %d pods bound, want exactly %d", step, len(got), want)
		}
	}
	expect("quota of 10", 10)

	raised := h100("14")
	raised.ResourceVersion = "2"
	if _, err := quotas.SchedulingV1alpha1().NodePoolQuotas().Update(ctx, raised, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("quota raised to 14", 14)

	for _, name := range bound()[:2] {
		if err := cs.CoreV1().Pods("a-1").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	expect("2 bound pods deleted", 14)
}

func ptrTo[T any](v T) *T { return &v }
