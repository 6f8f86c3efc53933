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

// Package apply puts the objects of a scenario on a cluster as `kubectl
// apply --server-side` would: any kind, through the dynamic client and a
// REST mapper fed by discovery, in dependency order (see Order). It knows
// no scenario type, and names kinds only where one needs a rule of its own
// (kinds.go).
package apply

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// FieldManager owns the fields the playground applies.
const FieldManager = "playground"

// Applier applies objects to one cluster. It is safe for concurrent use.
type Applier struct {
	dynamic  dynamic.Interface
	mapper   *restmapper.DeferredDiscoveryRESTMapper
	progress io.Writer

	mu sync.Mutex
	// namespaces are known to exist: made here, or found there.
	namespaces sets.Set[string]
	// created are the namespaces Apply made, in order.
	created []string
}

// New returns an Applier for the cluster of cfg. progress receives a line
// when Apply waits for something (a CRD to be established); nil discards.
func New(cfg *rest.Config, progress io.Writer) (*Applier, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("http client: %w", err)
	}
	dc, err := dynamic.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	mapper, err := mapperNew(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	return &Applier{dynamic: dc, mapper: mapper, progress: progress, namespaces: sets.New[string]()}, nil
}

// Apply applies obj server-side as FieldManager, without forcing
// conflicts: a field another manager owns is an error. A namespaced
// object without a namespace goes to workload.DefaultNamespace, and its namespace
// is created if missing; a cluster-scoped one must have none. A kind with
// a rule (kinds.go) is waited for as the rule says before Apply returns.
func (a *Applier) Apply(ctx context.Context, obj *unstructured.Unstructured) (workload.Target, error) {
	if obj == nil {
		return workload.Target{}, fmt.Errorf("no object to apply")
	}
	gvk := obj.GroupVersionKind()
	ns, name := obj.GetNamespace(), obj.GetName()
	if name == "" {
		return workload.Target{}, fmt.Errorf("%s: metadata.name is required (server-side apply takes no generateName)", applyDescribe(gvk.Kind, ns, name))
	}
	m, err := a.mapping(ctx, gvk)
	if err != nil {
		return workload.Target{}, fmt.Errorf("%s: %w", applyDescribe(gvk.Kind, ns, name), err)
	}
	res, ns, err := a.resource(m, ns)
	if err != nil {
		return workload.Target{}, fmt.Errorf("%s: %w", applyDescribe(gvk.Kind, obj.GetNamespace(), name), err)
	}
	if ns != "" {
		if err := a.ensureNamespace(ctx, ns); err != nil {
			return workload.Target{}, err
		}
	}
	// The namespace comes from the URL (res): obj is sent as it is.
	out, err := res.Apply(ctx, name, obj, metav1.ApplyOptions{FieldManager: FieldManager, Force: false})
	if err != nil {
		return workload.Target{}, fmt.Errorf("creating %s: %w", applyDescribe(gvk.Kind, ns, name), err)
	}
	klog.FromContext(ctx).V(2).Info("Applied object", "kind", gvk.Kind, "object", klog.KObj(out))
	if rule := kindsRule(gvk.GroupKind()); rule.after != nil {
		if err := rule.after(ctx, a, res, out); err != nil {
			return workload.Target{}, fmt.Errorf("creating %s: %w", applyDescribe(gvk.Kind, ns, name), err)
		}
	}
	return workload.Target{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: ns, Name: name,
		Resource: m.Resource, UID: out.GetUID()}, nil
}

// resource is the client of mapping's resource in namespace ns (defaulted
// for a namespaced kind, refused for a cluster-scoped one), and ns.
func (a *Applier) resource(m *meta.RESTMapping, ns string) (dynamic.ResourceInterface, string, error) {
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		if ns != "" {
			return nil, "", fmt.Errorf("metadata.namespace is %q, but kind %s is cluster-scoped: remove the namespace", ns, m.GroupVersionKind.Kind)
		}
		return a.dynamic.Resource(m.Resource), "", nil
	}
	if ns == "" {
		ns = workload.DefaultNamespace
	}
	return a.dynamic.Resource(m.Resource).Namespace(ns), ns, nil
}

// ensureNamespace creates ns unless it is known to exist.
func (a *Applier) ensureNamespace(ctx context.Context, ns string) error {
	a.mu.Lock()
	known := a.namespaces.Has(ns)
	a.mu.Unlock()
	if known {
		return nil
	}
	_, err := a.dynamic.Resource(kindsNamespace.Resource).Create(ctx, kindsNamespace.Object(ns), metav1.CreateOptions{FieldManager: FieldManager})
	made := err == nil
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if made {
		klog.FromContext(ctx).V(2).Info("Created namespace", "namespace", ns)
		a.created = append(a.created, ns)
	}
	a.namespaces.Insert(ns)
	return nil
}

// CreatedNamespaces are the namespaces Apply created because an object
// was in one that did not exist, in the order it made them.
func (a *Applier) CreatedNamespaces() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.created)
}

func (a *Applier) progressf(format string, args ...any) {
	if a.progress != nil {
		fmt.Fprintf(a.progress, format, args...)
	}
}

// applyDescribe names an object as errors do: "Deployment default/web".
func applyDescribe(kind, ns, name string) string {
	return kind + " " + klog.KRef(ns, name).String()
}
