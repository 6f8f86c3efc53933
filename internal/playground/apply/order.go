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

package apply

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Order is objs in the order Apply needs them: namespaces, then
// CustomResourceDefinitions, then DRA's DeviceClasses, ResourceSlices and
// DeviceTaintRules, then everything else, each group in the order given
// (the ranks are in kinds.go). objs is not changed.
func Order(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := slices.Clone(objs)
	slices.SortStableFunc(out, func(x, y *unstructured.Unstructured) int {
		return orderRank(x) - orderRank(y)
	})
	return out
}

// orderRank is obj's rank; a nil object ranks with the rest (Apply
// reports it).
func orderRank(obj *unstructured.Unstructured) int {
	if obj == nil {
		return rankOther
	}
	return kindsRule(obj.GroupVersionKind().GroupKind()).rank
}
