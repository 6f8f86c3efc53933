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

package nodeclaims

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// created is the creation time of the test NodeClaims.
var created = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// claim builds a NodeClaim as the API server would return it; edits change
// it further (a field set to nil is left out).
func claim(name, node string, edits ...func(obj map[string]any)) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "karpenter.sh/v1",
		"kind":       "NodeClaim",
		"metadata":   map[string]any{"name": name},
		"spec":       map[string]any{},
		"status":     map[string]any{},
	}}
	u.SetCreationTimestamp(metav1.NewTime(created))
	if node != "" {
		_ = unstructured.SetNestedField(u.Object, node, "status", "nodeName")
	}
	for _, e := range edits {
		e(u.Object)
	}
	return u
}

func withProviderID(id string) func(map[string]any) {
	return func(obj map[string]any) { obj["status"].(map[string]any)["providerID"] = id }
}

// k8sNode is the Node named name with spec.providerID id ("": none).
func k8sNode(name, id string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.NodeSpec{ProviderID: id}}
}

func withExpireAfter(v any) func(map[string]any) {
	return func(obj map[string]any) { obj["spec"].(map[string]any)["expireAfter"] = v }
}

// withCondition appends a status condition of type t with status s.
func withCondition(t, s string) func(map[string]any) {
	return func(obj map[string]any) {
		st := obj["status"].(map[string]any)
		conds, _ := st["conditions"].([]any)
		st["conditions"] = append(conds, map[string]any{
			"type": t, "status": s, "reason": t, "message": "",
			"lastTransitionTime": created.Format(time.RFC3339),
		})
	}
}
