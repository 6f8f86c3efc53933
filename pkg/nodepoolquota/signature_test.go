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
	"encoding/json"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"github.com/adminsched/scheduler-plugins/apis/scheduling/v1alpha1"
)

// signature is the pod's signature as the framework builds it from the
// plugin's fragments: the JSON of a map keyed by fragment key.
func signature(t *testing.T, pl *NodePoolQuota, pod *v1.Pod) string {
	t.Helper()
	fragments, status := pl.SignPod(context.Background(), pod)
	if !status.IsSuccess() {
		t.Fatalf("SignPod(%s): %v", pod.Name, status)
	}
	m := map[string]any{}
	for _, f := range fragments {
		m[f.Key] = f.Value
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatalf("SignPod(%s): fragments do not marshal: %v", pod.Name, err)
	}
	return string(b)
}

// TestSignature checks that pods sign alike exactly when the plugin
// answers alike for them whatever the quotas: same namespace, same
// requests; and that the quotas themselves do not enter the signature.
func TestSignature(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	pl := newPlugin(nil, nil)
	a1 := gpuPod("x", "a-1", 1, 0)
	before := signature(t, pl, a1)
	pl.setQuotas(logger, []*v1alpha1.NodePoolQuota{h100("10")})
	if got := signature(t, pl, a1); got != before {
		t.Errorf("the signature changed with the quotas: %s, then %s", before, got)
	}
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		same bool
	}{
		{name: "another pod alike", pod: gpuPod("y", "a-1", 1, 5), same: true},
		{name: "another namespace of the team", pod: gpuPod("x", "a-2", 1, 0)},
		{name: "more GPUs", pod: gpuPod("x", "a-1", 2, 0)},
		{name: "a cpu request too", pod: st.MakePod().Name("x").Namespace("a-1").Res(map[v1.ResourceName]string{gpu: "1", v1.ResourceCPU: "1"}).Obj()},
	} {
		if got := signature(t, pl, tc.pod) == before; got != tc.same {
			t.Errorf("%s: signs like the first pod %v, want %v", tc.name, got, tc.same)
		}
	}
}

// TestRejectionsCountedOncePerAttempt checks the rejection counter: one
// per attempt, labelled with pool, team and resource, however many nodes
// the quota rejects and however many clones filter.
func TestRejectionsCountedOncePerAttempt(t *testing.T) {
	h := newHarness(t, nil, []*v1alpha1.NodePoolQuota{h100("0")}, clusterNodes())
	pod := gpuPod("p", "a-1", 1, 0)
	for range 3 {
		r := h.cycle(pod)
		clone := r.state.Clone()
		ni, _ := h.snap.NodeInfos().Get("h1")
		if s := h.f.RunFilterPlugins(h.ctx, clone, pod, ni); s.Code() != fwk.Unschedulable {
			t.Fatalf("h1: %v, want Unschedulable", s)
		}
	}
	got, err := testutil.GetCounterValuesFromGatherer(legacyregistry.DefaultGatherer, "nodepoolquota_rejections_total",
		map[string]string{"profile": h.pl.profile, "pool": "h100", "team": "team-a"}, "resource")
	if err != nil {
		t.Fatal(err)
	}
	if got["nvidia.com/gpu"] != 3 || len(got) != 1 {
		t.Errorf("rejections by resource %v, want nvidia.com/gpu: 3 (3 attempts over 4 pool nodes)", got)
	}
}
