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

package controller

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/adminsched/scheduler-plugins/apis/scheduling/v1alpha1"
	npqfake "github.com/adminsched/scheduler-plugins/pkg/generated/clientset/versioned/fake"
	npqinformers "github.com/adminsched/scheduler-plugins/pkg/generated/informers/externalversions"
)

const gpu = v1.ResourceName("nvidia.com/gpu")

var podsGVR = v1.SchemeGroupVersion.WithResource("pods")

// harness is a fake API server that, unlike the plain fake, guards pod
// writes by resourceVersion as the real one does, and a controller on it
// whose syncs the test calls.
type harness struct {
	t      *testing.T
	ctx    context.Context
	client *fake.Clientset
	npq    *npqfake.Clientset
	rec    *record.FakeRecorder
	ctl    *Controller
	rv     atomic.Int64
	// podUpdates counts the pod writes that went through.
	podUpdates atomic.Int32
	// conflictNext, when set, answers the next pod write with a conflict.
	conflictNext atomic.Bool
}

func newHarness(t *testing.T, objs ...runtime.Object) *harness {
	t.Helper()
	RegisterMetrics()
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true), ktesting.Verbosity(4)))
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	t.Cleanup(cancel)
	h := &harness{t: t, ctx: ctx, client: fake.NewClientset(), npq: npqfake.NewSimpleClientset(), rec: record.NewFakeRecorder(1000)}
	h.client.PrependReactor("update", "pods", h.guardUpdate)
	for _, o := range objs {
		h.add(o)
	}
	factory := informers.NewSharedInformerFactory(h.client, 0)
	qf := npqinformers.NewSharedInformerFactory(h.npq, 0)
	ctl, err := New(h.client, factory, Quotas{
		Informer: qf.Scheduling().V1alpha1().NodePoolQuotas().Informer(),
		Start:    qf.Start,
		Client:   h.npq.SchedulingV1alpha1().NodePoolQuotas(),
	}, h.rec)
	if err != nil {
		t.Fatal(err)
	}
	h.ctl = ctl
	factory.Start(ctx.Done())
	qf.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), ctl.synced...) {
		t.Fatal("caches did not sync")
	}
	return h
}

// add stores o in its fake with a fresh resourceVersion.
func (h *harness) add(o runtime.Object) {
	h.t.Helper()
	o.(metav1.Object).SetResourceVersion(strconv.FormatInt(h.rv.Add(1), 10))
	var err error
	if q, ok := o.(*v1alpha1.NodePoolQuota); ok {
		err = h.npq.Tracker().Add(q)
	} else {
		err = h.client.Tracker().Add(o)
	}
	if err != nil {
		h.t.Fatal(err)
	}
}

// guardUpdate fails a pod write whose resourceVersion is not the stored
// one, and otherwise stores it with a new one.
func (h *harness) guardUpdate(a clienttesting.Action) (bool, runtime.Object, error) {
	pod := a.(clienttesting.UpdateAction).GetObject().(*v1.Pod).DeepCopy()
	if h.conflictNext.Swap(false) {
		return true, nil, apierrors.NewConflict(podsGVR.GroupResource(), pod.Name, fmt.Errorf("another writer came first"))
	}
	cur, err := h.client.Tracker().Get(podsGVR, pod.Namespace, pod.Name)
	if err != nil {
		return true, nil, err
	}
	if cur.(*v1.Pod).ResourceVersion != pod.ResourceVersion {
		return true, nil, apierrors.NewConflict(podsGVR.GroupResource(), pod.Name, fmt.Errorf("resourceVersion %s is stale", pod.ResourceVersion))
	}
	pod.ResourceVersion = strconv.FormatInt(h.rv.Add(1), 10)
	if err := h.client.Tracker().Update(podsGVR, pod, pod.Namespace); err != nil {
		return true, nil, err
	}
	h.podUpdates.Add(1)
	return true, pod, nil
}

// settle waits until the controller's caches show every stored pod and
// quota as stored.
func (h *harness) settle() {
	h.t.Helper()
	err := wait.PollUntilContextTimeout(h.ctx, 2*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		stored, err := h.client.Tracker().List(podsGVR, v1.SchemeGroupVersion.WithKind("Pod"), "")
		if err != nil {
			return false, err
		}
		want := map[types.UID]string{}
		for _, p := range stored.(*v1.PodList).Items {
			want[p.UID] = p.ResourceVersion
		}
		cached, err := h.ctl.pods.List(labels.Everything())
		if err != nil || len(cached) != len(want) {
			return false, err
		}
		for _, p := range cached {
			if want[p.UID] != p.ResourceVersion {
				return false, nil
			}
		}
		quotas, err := h.npq.SchedulingV1alpha1().NodePoolQuotas().List(h.ctx, metav1.ListOptions{})
		if err != nil || len(quotas.Items) != len(h.ctl.quotas.Informer.GetStore().List()) {
			return false, err
		}
		for _, q := range quotas.Items {
			obj, ok, _ := h.ctl.quotas.Informer.GetStore().GetByKey(q.Name)
			// The fake keeps resourceVersions as written: compare it all.
			if !ok || !equality.Semantic.DeepEqual(obj, &q) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		h.t.Fatalf("the caches did not catch up: %v", err)
	}
}

// sync runs one sync on the caches as they are.
func (h *harness) sync() {
	h.t.Helper()
	if err := h.ctl.sync(h.ctx); err != nil {
		h.t.Fatalf("sync: %v", err)
	}
}

// settleAndSync syncs on caches that have caught up.
func (h *harness) settleAndSync() {
	h.t.Helper()
	h.settle()
	h.sync()
}

func (h *harness) pod(ns, name string) *v1.Pod {
	h.t.Helper()
	obj, err := h.client.Tracker().Get(podsGVR, ns, name)
	if err != nil {
		h.t.Fatal(err)
	}
	return obj.(*v1.Pod)
}

// ungated are the names of the stored pods of ns without the gate and not
// bound.
func (h *harness) ungated(ns string) []string {
	h.t.Helper()
	list, err := h.client.CoreV1().Pods(ns).List(h.ctx, metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for i := range list.Items {
		if p := &list.Items[i]; !hasGate(p) && p.Spec.NodeName == "" {
			out = append(out, p.Name)
		}
	}
	return out
}

// bind puts the stored pod on node.
func (h *harness) bind(ns, name, node string) {
	h.t.Helper()
	pod := h.pod(ns, name).DeepCopy()
	pod.Spec.NodeName = node
	pod.ResourceVersion = strconv.FormatInt(h.rv.Add(1), 10)
	if err := h.client.Tracker().Update(podsGVR, pod, ns); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) deletePod(ns, name string) {
	h.t.Helper()
	if err := h.client.Tracker().Delete(podsGVR, ns, name); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) quota(name string) *v1alpha1.NodePoolQuota {
	h.t.Helper()
	q, err := h.npq.SchedulingV1alpha1().NodePoolQuotas().Get(h.ctx, name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return q
}

// events drains the recorder.
func (h *harness) events() []string {
	var out []string
	for {
		select {
		case e := <-h.rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func node(name string, labels map[string]string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func namespace(name string, labels map[string]string) *v1.Namespace {
	return &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

var created = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// podOpt changes a test pod.
type podOpt func(*v1.Pod)

// gatedPod is a pod of ns created i seconds after created, asking for
// gpus GPUs, with the quota's gate.
func gatedPod(ns, name string, i int, gpus int64, opts ...podOpt) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "/" + name),
			CreationTimestamp: metav1.NewTime(created.Add(time.Duration(i) * time.Second))},
		Spec: v1.PodSpec{
			SchedulingGates: []v1.PodSchedulingGate{{Name: v1alpha1.SchedulingGate}},
			Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{gpu: *resource.NewQuantity(gpus, resource.DecimalSI)},
				Limits:   v1.ResourceList{gpu: *resource.NewQuantity(gpus, resource.DecimalSI)},
			}}},
		},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func withNodeSelector(sel map[string]string) podOpt {
	return func(p *v1.Pod) { p.Spec.NodeSelector = sel }
}

func withCPU(q string) podOpt {
	return func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse(q) }
}

func withGates(names ...string) podOpt {
	return func(p *v1.Pod) {
		p.Spec.SchedulingGates = nil
		for _, n := range names {
			p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, v1.PodSchedulingGate{Name: n})
		}
	}
}

func withAffinityIn(key string, values ...string) podOpt {
	return func(p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: values}}}},
		}}}
	}
}

// npq is a quota named name over the nodes with labels sel, with one team
// of namespaces nss and limits.
func npq(name string, sel map[string]string, team string, nss []string, limits v1.ResourceList) *v1alpha1.NodePoolQuota {
	return &v1alpha1.NodePoolQuota{
		ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1},
		Spec: v1alpha1.NodePoolQuotaSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: sel},
			Teams:        []v1alpha1.TeamQuota{{Name: team, Namespaces: nss, Limits: limits}},
		},
	}
}

func gpus(n int64) v1.ResourceList {
	return v1.ResourceList{gpu: *resource.NewQuantity(n, resource.DecimalSI)}
}
