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

package ondemandshare

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"

	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

func undecidedCounts(t *testing.T, profile string) map[string]float64 {
	t.Helper()
	got, err := testutil.GetCounterValuesFromGatherer(legacyregistry.DefaultGatherer, "ondemandshare_undecided_pods_total",
		map[string]string{"profile": profile}, "policy")
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestUndecidedPodsCounted binds pods through PostBind: an undecided pod
// counts once under its policy, a decided one not at all, and every
// policy's series exists from the start.
func TestUndecidedPodsCounted(t *testing.T) {
	other := webPolicy(50)
	other.Name, other.Namespaces = "other", []string{"other"}
	undecided, decidedPod := webPod("undecided"), webPod("decided", decidedAs(share.OnDemand))
	tfw := newTestFramework(t, argsOf(webPolicy(50), other), defaultWorld(undecided, decidedPod))
	if diff := cmp.Diff(map[string]float64{"web": 0, "other": 0}, undecidedCounts(t, tfw.profile)); diff != "" {
		t.Errorf("before any pod (-want +got):\n%s", diff)
	}
	for _, pod := range []*v1.Pod{undecided, decidedPod} {
		r := tfw.cycle(pod)
		tfw.f.RunPostBindPlugins(tfw.ctx, r.state, pod, "od-1")
	}
	if diff := cmp.Diff(map[string]float64{"web": 1, "other": 0}, undecidedCounts(t, tfw.profile)); diff != "" {
		t.Errorf("after an undecided and a decided pod (-want +got):\n%s", diff)
	}
}

// TestPostBindOutsideTheCycle: PostBind runs in the binding goroutine while
// the next cycle rewrites the snapshot; it reads the node from the
// informer, so its Event names the class of the node the pod got.
func TestPostBindOutsideTheCycle(t *testing.T) {
	undecided := webPod("undecided")
	tfw := newTestFramework(t, argsOf(webPolicy(50)), defaultWorld(undecided))
	rec := events.NewFakeRecorder(1)
	tfw.pl.recorder = rec
	r := tfw.cycle(undecided)
	*tfw.snapshot = *cache.NewSnapshot(nil, nil)
	tfw.f.RunPostBindPlugins(tfw.ctx, r.state, undecided, "od-1")
	select {
	case e := <-rec.Events:
		if !strings.Contains(e, `placed on a "on-demand" node`) {
			t.Errorf("event %q, want it to name the on-demand class of od-1", e)
		}
	default:
		t.Error("no event for the undecided pod")
	}
}
