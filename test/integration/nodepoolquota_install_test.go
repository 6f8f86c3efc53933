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

package integration

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

const (
	nodePoolQuotaControllerDir = "../../manifests/nodepoolquota-controller"
	crdsDir                    = "../../manifests/crds"
)

// TestNodePoolQuotaInstall renders the NodePoolQuota controller from
// manifests/nodepoolquota-controller and from the chart
// (nodePoolQuota.controller.enabled=true), in the same namespace, and
// holds the two equal where they must be: the same kinds of objects, the
// same grants to the controller's ServiceAccount, the same admission
// policy (its CEL is copied into the chart), and the same container (its
// command, probes, ports, resources, security context).
func TestNodePoolQuotaInstall(t *testing.T) {
	const ns = "adminsched-system"
	kust := kustomize(t, nodePoolQuotaControllerDir)
	chart := nodePoolQuotaObjects(renderChart(t, ns, "--set", "nodePoolQuota.controller.enabled=true"))
	chartSA := chartRelease + "-nodepoolquota-controller"

	t.Run("same kinds of objects", func(t *testing.T) {
		kinds := func(objs []*unstructured.Unstructured) []string {
			var out []string
			for _, o := range objs {
				out = append(out, o.GetKind())
			}
			slices.Sort(out)
			return out
		}
		if diff := cmp.Diff(kinds(kust), kinds(chart)); diff != "" {
			t.Errorf("the chart renders other objects than the kustomization (-kustomize +chart):\n%s", diff)
		}
	})
	t.Run("same grants", func(t *testing.T) {
		for _, p := range checkSameGrants(t, kust, chart, ns, "nodepoolquota-controller", chartSA) {
			if strings.Contains(p.String(), "*") {
				t.Errorf("the controller is granted %s", p)
			}
		}
	})
	t.Run("same admission policy", func(t *testing.T) {
		for _, kind := range []string{"MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"} {
			want, got := specOf(t, kust, kind), specOf(t, chart, kind)
			if kind == "MutatingAdmissionPolicyBinding" {
				// The chart's policy has the release's name.
				if got["policyName"] != chartRelease+"-nodepoolquota-gate" {
					t.Errorf("the chart's binding binds policy %v, want %s", got["policyName"], chartRelease+"-nodepoolquota-gate")
				}
				got["policyName"] = want["policyName"]
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the chart's %s differs from the kustomization's (-kustomize +chart):\n%s", kind, diff)
			}
		}
	})
	t.Run("same container", func(t *testing.T) {
		want, got := deploymentOf(t, kust), deploymentOf(t, chart)
		if got.Spec.Template.Spec.ServiceAccountName != chartSA {
			t.Errorf("the chart's Deployment runs as %q, want %q", got.Spec.Template.Spec.ServiceAccountName, chartSA)
		}
		if diff := cmp.Diff(want.Spec.Replicas, got.Spec.Replicas); diff != "" {
			t.Errorf("replicas (-kustomize +chart):\n%s", diff)
		}
		if diff := cmp.Diff(want.Spec.Template.Spec.SecurityContext, got.Spec.Template.Spec.SecurityContext); diff != "" {
			t.Errorf("the pod's security context (-kustomize +chart):\n%s", diff)
		}
		wc, gc := want.Spec.Template.Spec.Containers, got.Spec.Template.Spec.Containers
		if len(wc) != 1 || len(gc) != 1 {
			t.Fatalf("containers: kustomize %d, chart %d, want 1", len(wc), len(gc))
		}
		// The image is the chart's appVersion and a value, not the placeholder.
		if !strings.HasPrefix(gc[0].Image, "adminsched/nodepoolquota-controller:") {
			t.Errorf("the chart's image is %q", gc[0].Image)
		}
		gc[0].Image, gc[0].ImagePullPolicy = wc[0].Image, wc[0].ImagePullPolicy
		if diff := cmp.Diff(wc[0], gc[0]); diff != "" {
			t.Errorf("the chart's container differs from the kustomization's (-kustomize +chart):\n%s", diff)
		}
	})
	t.Run("the Service and PodDisruptionBudget select the pods", func(t *testing.T) {
		labels := deploymentOf(t, chart).Spec.Template.Labels
		for _, kind := range []string{"Service", "PodDisruptionBudget"} {
			spec := specOf(t, chart, kind)
			sel, _, _ := unstructured.NestedStringMap(spec, "selector")
			if kind == "PodDisruptionBudget" {
				sel, _, _ = unstructured.NestedStringMap(spec, "selector", "matchLabels")
			}
			if len(sel) == 0 {
				t.Errorf("the chart's %s selects nothing", kind)
			}
			for k, v := range sel {
				if labels[k] != v {
					t.Errorf("the chart's %s selects %s=%s, which the pods lack (%v)", kind, k, v, labels)
				}
			}
		}
	})
	t.Run("off by default", func(t *testing.T) {
		if objs := nodePoolQuotaObjects(renderChart(t, ns)); len(objs) > 0 {
			t.Errorf("the chart's defaults render %d objects of the controller, first %s %s", len(objs), objs[0].GetKind(), objs[0].GetName())
		}
	})
	t.Run("one replica needs no leader election", func(t *testing.T) {
		if _, err := helmTemplate(t, ns, "--set", "nodePoolQuota.controller.enabled=true",
			"--set", "nodePoolQuota.controller.leaderElection.enabled=false"); err == nil ||
			!strings.Contains(err.Error(), "nodePoolQuota.controller.leaderElection.enabled=true") {
			t.Errorf("two replicas without leader election: %v, want the chart to refuse", err)
		}
		objs := nodePoolQuotaObjects(renderChart(t, ns, "--set", "nodePoolQuota.controller.enabled=true",
			"--set", "nodePoolQuota.controller.leaderElection.enabled=false", "--set", "nodePoolQuota.controller.replicas=1"))
		for _, o := range objs {
			if o.GetKind() == "Role" || o.GetKind() == "PodDisruptionBudget" {
				t.Errorf("one replica without leader election renders %s %s", o.GetKind(), o.GetName())
			}
		}
		if cmd := strings.Join(deploymentOf(t, objs).Spec.Template.Spec.Containers[0].Command, " "); !strings.Contains(cmd, "--leader-elect=false") {
			t.Errorf("command %q lacks --leader-elect=false", cmd)
		}
	})
}

// TestChartCRDsMatchManifests holds the chart's crds/, which Helm installs
// before the templates, identical to manifests/crds, which
// hack/update-crds.sh generates and copies there.
func TestChartCRDsMatchManifests(t *testing.T) {
	yamls := func(dir string) map[string][]byte {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][]byte{}
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), "scheduling.adminsched.io_") {
				continue // kustomization.yaml
			}
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			out[e.Name()] = data
		}
		return out
	}
	want, got := yamls(crdsDir), yamls(filepath.Join(chartDir, "crds"))
	if len(want) == 0 {
		t.Fatalf("no CRD in %s", crdsDir)
	}
	for name, data := range want {
		if g, ok := got[name]; !ok {
			t.Errorf("the chart's crds/ lacks %s: run hack/update-crds.sh", name)
		} else if !bytes.Equal(g, data) {
			t.Errorf("the chart's crds/%s differs from %s/%s: run hack/update-crds.sh", name, crdsDir, name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("the chart's crds/ holds %s, which %s does not: run hack/update-crds.sh", name, crdsDir)
		}
	}
}

// nodePoolQuotaObjects picks the NodePoolQuota controller's and gate's
// objects of objs (their names hold "nodepoolquota").
func nodePoolQuotaObjects(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if strings.Contains(o.GetName(), "nodepoolquota") {
			out = append(out, o)
		}
	}
	return out
}

// specOf returns the spec of the one object of kind in objs.
func specOf(t testing.TB, objs []*unstructured.Unstructured, kind string) map[string]any {
	t.Helper()
	var specs []map[string]any
	for _, o := range objs {
		if o.GetKind() == kind {
			spec, _, _ := unstructured.NestedMap(o.Object, "spec")
			specs = append(specs, spec)
		}
	}
	if len(specs) != 1 {
		t.Fatalf("%d objects of kind %s, want 1", len(specs), kind)
	}
	return specs[0]
}

// deploymentOf returns the one Deployment of objs.
func deploymentOf(t testing.TB, objs []*unstructured.Unstructured) *appsv1.Deployment {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(oneObject(t, objs, "Deployment").Object, d); err != nil {
		t.Fatal(err)
	}
	return d
}

// oneObject returns the one object of kind in objs.
func oneObject(t testing.TB, objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	t.Helper()
	var found []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d objects of kind %s, want 1", len(found), kind)
	}
	return found[0]
}
