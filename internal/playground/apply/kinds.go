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
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// kindRule is what a kind needs beyond a server-side apply. This table is
// the only place of the package that names kinds: every other kind is
// applied as written.
type kindRule struct {
	// rank orders kinds in Order, lower first; kinds without a rule rank
	// rankOther.
	rank int
	// after runs once an object of the kind is applied, before Apply
	// returns; res is the kind's resource (cluster-scoped).
	after func(ctx context.Context, a *Applier, res dynamic.ResourceInterface, obj *unstructured.Unstructured) error
}

const rankOther = 3

var kindRules = map[schema.GroupKind]kindRule{
	// Objects go into namespaces: make those first, with their labels.
	{Kind: "Namespace"}: {rank: 0},
	// Custom resources map only once their CRD is served.
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: {rank: 1, after: crdEstablished},
	// DRA's devices, before the pods that ask for them: a pod asking for
	// a DeviceClass's extended resource before the class exists is judged
	// as asking for a node's resource, which no node has.
	{Group: "resource.k8s.io", Kind: "DeviceClass"}:     {rank: 2},
	{Group: "resource.k8s.io", Kind: "ResourceSlice"}:   {rank: 2},
	{Group: "resource.k8s.io", Kind: "DeviceTaintRule"}: {rank: 2},
}

// kindsRule is the rule of gk, the zero rule (rank rankOther) if none.
func kindsRule(gk schema.GroupKind) kindRule {
	if r, ok := kindRules[gk]; ok {
		return r
	}
	return kindRule{rank: rankOther}
}

// kindsNamespace is a namespace, as Apply creates a missing one.
var kindsNamespace = struct {
	Resource schema.GroupVersionResource
	Object   func(name string) *unstructured.Unstructured
}{
	Resource: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"},
	Object: func(name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("Namespace")
		u.SetName(name)
		return u
	},
}

// crdEstablished waits, watching, until the CRD is Established, then until
// the mapper maps each of its served versions: discovery catches up with
// the condition a moment later, so mapping right away can still miss.
func crdEstablished(ctx context.Context, a *Applier, res dynamic.ResourceInterface, obj *unstructured.Unstructured) error {
	name := obj.GetName()
	done, err := crdCondition(obj)
	if err == nil && !done {
		a.progressf("waiting for CustomResourceDefinition %s to be established\n", name)
		selector := fields.OneTermEqualSelector("metadata.name", name).String()
		lw := &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
				opts.FieldSelector = selector
				return res.List(ctx, opts)
			},
			WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
				opts.FieldSelector = selector
				return res.Watch(ctx, opts)
			},
		}
		_, err = watchtools.UntilWithSync(ctx, lw, &unstructured.Unstructured{}, nil, func(ev watch.Event) (bool, error) {
			if ev.Type == watch.Deleted {
				return false, fmt.Errorf("deleted while waiting")
			}
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				return false, nil
			}
			return crdCondition(u)
		})
	}
	if err != nil {
		return fmt.Errorf("waiting for CustomResourceDefinition %s to be established: %w", name, err)
	}
	group, _, _ := unstructured.NestedString(obj.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(obj.Object, "spec", "names", "kind")
	versions, _, _ := unstructured.NestedSlice(obj.Object, "spec", "versions")
	var served []string
	for _, v := range versions {
		m, _ := v.(map[string]any)
		if ok, _, _ := unstructured.NestedBool(m, "served"); ok {
			n, _, _ := unstructured.NestedString(m, "name")
			served = append(served, n)
		}
	}
	return a.mapperAwait(ctx, schema.GroupKind{Group: group, Kind: kind}, served)
}

// crdCondition says whether a CRD is Established, and fails when its names
// were refused (it never will be).
func crdCondition(obj *unstructured.Unstructured) (bool, error) {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	established := false
	for _, c := range conds {
		m, _ := c.(map[string]any)
		typ, _, _ := unstructured.NestedString(m, "type")
		status, _, _ := unstructured.NestedString(m, "status")
		switch {
		case typ == "Established" && status == "True":
			established = true
		case typ == "NamesAccepted" && status == "False":
			msg, _, _ := unstructured.NestedString(m, "message")
			return false, fmt.Errorf("names not accepted: %s", msg)
		}
	}
	return established, nil
}
