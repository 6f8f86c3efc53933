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
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/adminsched/scheduler-plugins/internal/schedulertest"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

// TestSignature signs pods through the framework, as the scheduling queue
// does: a pod a policy may select undecided gets no signature, so that the
// batch never hands it the nodes of another pod of its workload, whose
// count was one less; every other pod keeps batching.
func TestSignature(t *testing.T) {
	byLabel := webPolicy(50)
	byLabel.Name, byLabel.Namespaces = "by-label", nil
	byLabel.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"share": "on"}}
	tests := []struct {
		name       string
		pod        *v1.Pod
		wantSigned bool
	}{
		{name: "undecided, selected", pod: webPod("a")},
		// by-label may select it as soon as the namespace is labelled, which
		// re-signs no pod.
		{name: "undecided, in a namespace a namespaceSelector may select", pod: webPod("a", inNamespace("other"))},
		{name: "undecided, of a ReplicaSet not cached yet", pod: webPod("a", ownedBy(controllerRef("apps/v1", "ReplicaSet", "new", "rs-new")))},
		{name: "decided", pod: webPod("a", decidedAs(share.OnDemand)), wantSigned: true},
		{name: "an excluded namespace", pod: webPod("a", inNamespace("kube-system")), wantSigned: true},
		{name: "labels no podSelector matches", pod: webPod("a", labelled("app", "api")), wantSigned: true},
		{name: "a DaemonSet pod", pod: webPod("a", ownedBy(controllerRef("apps/v1", "DaemonSet", "ds", "ds"))), wantSigned: true},
	}
	tfw := newTestFramework(t, argsOf(webPolicy(50), byLabel), defaultWorld())
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sig := schedulertest.SignPod(tfw.ctx, tfw.f, tc.pod)
			if got := sig != nil; got != tc.wantSigned {
				t.Errorf("signed = %v (%s), want %v", got, sig, tc.wantSigned)
			}
		})
	}
	t.Run("control: without policies every pod is signed", func(t *testing.T) {
		none := newTestFramework(t, argsOf(), defaultWorld())
		if sig := schedulertest.SignPod(none.ctx, none.f, webPod("a")); sig == nil {
			t.Errorf("no policy: the pod is not signed")
		}
	})
}
