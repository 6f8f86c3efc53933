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

package framework

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	crdclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/typed/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

const (
	// crdPollInterval is how often InstallCRD looks whether the CRD is served.
	crdPollInterval = 100 * time.Millisecond
	// crdTimeout is InstallCRD's default wait.
	crdTimeout = 30 * time.Second
)

// CRDOptions say how InstallCRD takes a CRD.
type CRDOptions struct {
	// MayExist takes a CRD of the same name that is there already (tests
	// that share one etcd installed it before) instead of failing.
	MayExist bool
	// Timeout bounds the wait until the CRD is served: 30 s if zero.
	Timeout time.Duration
}

// InstallCRD creates crd and waits until it is served: Established, listed
// by discovery (which lags Established by a moment, and which clients that
// map resources, NodePoolQuota's New among them, ask), and answering a
// List. The error names the CRD and what it still waited for.
func InstallCRD(ctx context.Context, cfg *rest.Config, crd *apiextensionsv1.CustomResourceDefinition, opts CRDOptions) error {
	ext, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("CRD %s: %w", crd.Name, err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("CRD %s: %w", crd.Name, err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("CRD %s: %w", crd.Name, err)
	}
	return installCRD(ctx, ext.ApiextensionsV1().CustomResourceDefinitions(), disc, dyn, crd, opts)
}

func installCRD(ctx context.Context, crds crdclient.CustomResourceDefinitionInterface, disc discovery.DiscoveryInterface,
	dyn dynamic.Interface, crd *apiextensionsv1.CustomResourceDefinition, opts CRDOptions) error {
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil && !(opts.MayExist && apierrors.IsAlreadyExists(err)) {
		return &createError{name: crd.Name, err: err}
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = crdTimeout
	}
	waiting := "the CRD"
	err := wait.PollUntilContextTimeout(ctx, crdPollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		var err error
		waiting, err = crdNotServed(ctx, crds, disc, dyn, crd)
		return waiting == "" && err == nil, err
	})
	if err != nil {
		return fmt.Errorf("CRD %s is not served (waiting for %s): %w", crd.Name, waiting, err)
	}
	return nil
}

// createError is InstallCRD's when the CRD was not created: it is not
// this caller's to delete.
type createError struct {
	name string
	err  error
}

func (e *createError) Error() string { return fmt.Sprintf("creating CRD %s: %v", e.name, e.err) }
func (e *createError) Unwrap() error { return e.err }

// crdNotServed says what crd still waits for before it is served, or ""
// once it is. Its error ends the wait: the CRD will not be served.
func crdNotServed(ctx context.Context, crds crdclient.CustomResourceDefinitionInterface, disc discovery.DiscoveryInterface,
	dyn dynamic.Interface, crd *apiextensionsv1.CustomResourceDefinition) (string, error) {
	got, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
	if err != nil {
		return "the CRD", err
	}
	established := false
	for _, c := range got.Status.Conditions {
		if c.Type == apiextensionsv1.NamesAccepted && c.Status == apiextensionsv1.ConditionFalse {
			return "its names", fmt.Errorf("names not accepted: %s", c.Message)
		}
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			established = true
		}
	}
	if !established {
		return "Established", nil
	}
	gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: servedVersion(crd), Resource: crd.Spec.Names.Plural}
	gv := gvr.GroupVersion().String()
	list, err := disc.ServerResourcesForGroupVersion(gv)
	if apierrors.IsNotFound(err) {
		return "discovery to list " + gv, nil
	}
	if err != nil {
		return "discovery", err
	}
	listed := false
	for _, r := range list.APIResources {
		listed = listed || r.Name == gvr.Resource
	}
	if !listed {
		return "discovery to list " + gvr.Resource + " in " + gv, nil
	}
	// The handler of the resource may come after discovery: a client's
	// first request would fail with a 404.
	if _, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		return "a List of " + gvr.Resource + " (" + err.Error() + ")", nil
	}
	return "", nil
}

// servedVersion is the first version of crd that is served.
func servedVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Served {
			return v.Name
		}
	}
	return ""
}

// InstallKustomizedCRDs builds the kustomization in dir as Kustomize does,
// installs its CRDs as InstallCRD does and deletes them when t ends: the
// cluster is shared. It fails t on an object that is not a CRD. It returns
// the CRDs' names.
func InstallKustomizedCRDs(ctx context.Context, t testing.TB, cfg *rest.Config, dir string) []string {
	t.Helper()
	crds := apiextensionsclient.NewForConfigOrDie(cfg).ApiextensionsV1().CustomResourceDefinitions()
	var names []string
	for _, u := range Kustomize(t, dir) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if u.GetKind() != "CustomResourceDefinition" {
			t.Fatalf("%s has a %s %s, want CRDs only", dir, u.GetKind(), u.GetName())
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
			t.Fatalf("CRD %s of %s: %v", u.GetName(), dir, err)
		}
		err := InstallCRD(ctx, cfg, crd, CRDOptions{})
		// Deleted also after a failed wait: the next test would find it.
		if notCreated := (*createError)(nil); !errors.As(err, &notCreated) {
			t.Cleanup(func() { _ = crds.Delete(context.Background(), crd.Name, metav1.DeleteOptions{}) })
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, crd.Name)
	}
	return names
}
