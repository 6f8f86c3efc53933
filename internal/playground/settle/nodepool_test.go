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

package settle

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestSettleNodePool: a Karpenter NodePool is settled once its Ready
// condition is True for its last change; until then the reason says what
// Karpenter reports. Before the rule, every NodePool settled at once (as a
// kind without a rule with no status.observedGeneration).
func TestSettleNodePool(t *testing.T) {
	pool := func(conds ...map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
			"metadata": map[string]any{"name": "eu", "generation": int64(2)}}}
		if conds != nil {
			list := make([]any, 0, len(conds))
			for _, c := range conds {
				list = append(list, c)
			}
			u.Object["status"] = map[string]any{"conditions": list}
		}
		return u
	}
	ready := func(status string, observed int64) map[string]any {
		return map[string]any{"type": "Ready", "status": status, "observedGeneration": observed, "reason": "NodeClassNotReady", "message": "KWOKNodeClass missing"}
	}
	gk := schema.GroupKind{Group: "karpenter.sh", Kind: "NodePool"}
	type verdict struct {
		Settled bool
		Wants   string
	}
	for _, tt := range []struct {
		name string
		obj  *unstructured.Unstructured
		want verdict
	}{
		{name: "no status yet", obj: pool(), want: verdict{Wants: "its Ready condition True"}},
		{name: "ready", obj: pool(map[string]any{"type": "NodeClassReady", "status": "True"}, ready("True", 2)), want: verdict{Settled: true, Wants: "its Ready condition True"}},
		{name: "ready for an older generation", obj: pool(ready("True", 1)),
			want: verdict{Wants: "its Ready condition True (now True: NodeClassNotReady: KWOKNodeClass missing)"}},
		{name: "not ready", obj: pool(ready("False", 2)),
			want: verdict{Wants: "its Ready condition True (now False: NodeClassNotReady: KWOKNodeClass missing)"}},
		{name: "a NodePool of another group has no rule", obj: pool(),
			want: verdict{Settled: true, Wants: "its 0 pods bound or unschedulable (0 pending)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := gk
			if tt.name == "a NodePool of another group has no rule" {
				g.Group = "example.com"
			}
			s := settle(g, tt.obj, nil)
			if diff := cmp.Diff(tt.want, verdict{Settled: s.Settled, Wants: s.Wants}); diff != "" {
				t.Errorf("settle (-want +got):\n%s", diff)
			}
		})
	}
}
