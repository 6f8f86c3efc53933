//go:build !kube1.35

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

// MutatingAdmissionPolicy v1 exists since 1.36 (1.35's v1beta1: the admission package's unit tests).

package integration

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1config "github.com/adminsched/scheduler-plugins/apis/config/v1"
	"github.com/adminsched/scheduler-plugins/internal/testconfig"
)

// pruneArgs are the kubectl apply flags pkg/placementpolicy's README gives
// for keeping the rendered policies in step with the config: what the
// command no longer renders (a rule removed) is deleted.
var pruneArgs = []string{"apply", "--prune", "-l", "app.kubernetes.io/managed-by=placement-admission",
	"--prune-allowlist=admissionregistration.k8s.io/v1/MutatingAdmissionPolicy",
	"--prune-allowlist=admissionregistration.k8s.io/v1/MutatingAdmissionPolicyBinding", "-f", "-"}

// TestPlacementAdmissionWithKubectl runs the README's pipeline with the real
// binaries, bin/placement-admission piped into kubectl apply --prune, on
// a config of two rules and then on the same config with one rule removed
// and the other's weight changed: the removed rule's policy and binding are
// deleted, the other is updated.
func TestPlacementAdmissionWithKubectl(t *testing.T) {
	tc := newTestContext(t)
	kubectl := os.Getenv("KUBECTL")
	if kubectl == "" {
		kubectl, _ = filepath.Abs("../../bin/kubectl")
	}
	render, _ := filepath.Abs("../../bin/placement-admission")
	for _, bin := range []string{kubectl, render} {
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("this test runs %s: build it with `make kubectl` and `make build` (or set KUBECTL): %v", bin, err)
		}
	}
	rule := func(name string, weight int32) v1config.PlacementRule {
		return v1config.PlacementRule{Name: name, Namespaces: []string{tc.ns}, Action: "Prefer", Weight: ptr.To(weight),
			NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"capacity-type": "spot"}}}
	}
	t.Cleanup(func() {
		for _, kind := range []string{"mutatingadmissionpolicies", "mutatingadmissionpolicybindings"} {
			out, err := exec.Command(kubectl, "--kubeconfig", adminKubeconfig, "delete", kind, "-l", "app.kubernetes.io/managed-by=placement-admission").CombinedOutput()
			if err != nil {
				t.Errorf("deleting %s: %v: %s", kind, err, out)
			}
		}
	})
	apply := func(rules ...v1config.PlacementRule) {
		t.Helper()
		path := testconfig.Write(t, placementConfig(1, rules...))
		rendered, err := exec.Command(render, "--config", path).Output()
		if err != nil {
			t.Fatalf("placement-admission: %v", err)
		}
		cmd := exec.Command(kubectl, append([]string{"--kubeconfig", adminKubeconfig}, pruneArgs...)...)
		cmd.Stdin = bytes.NewReader(rendered)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kubectl %v: %v: %s", pruneArgs, err, out)
		}
	}
	type state struct{ Policies, Bindings, Weights []string }
	current := func() state {
		t.Helper()
		api := adminClient.AdmissionregistrationV1()
		sel := metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=placement-admission"}
		var s state
		policies, err := api.MutatingAdmissionPolicies().List(tc.ctx, sel)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range policies.Items {
			s.Policies = append(s.Policies, p.Name)
			for _, v := range p.Spec.Variables {
				if v.Name == "preferredTerm" {
					s.Weights = append(s.Weights, v.Expression[:len(`{"weight": dyn(`)+2])
				}
			}
		}
		bindings, err := api.MutatingAdmissionPolicyBindings().List(tc.ctx, sel)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bindings.Items {
			s.Bindings = append(s.Bindings, b.Name)
		}
		slices.Sort(s.Policies)
		slices.Sort(s.Bindings)
		slices.Sort(s.Weights)
		return s
	}

	apply(rule("kubectl-spot", 10), rule("kubectl-gone", 20))
	if diff := cmp.Diff(state{
		Policies: []string{"placementpolicy-kubectl-gone", "placementpolicy-kubectl-spot"},
		Bindings: []string{"placementpolicy-kubectl-gone", "placementpolicy-kubectl-spot"},
		Weights:  []string{`{"weight": dyn(10`, `{"weight": dyn(20`},
	}, current()); diff != "" {
		t.Errorf("after the first apply (-want +got):\n%s", diff)
	}
	apply(rule("kubectl-spot", 90))
	if diff := cmp.Diff(state{
		Policies: []string{"placementpolicy-kubectl-spot"},
		Bindings: []string{"placementpolicy-kubectl-spot"},
		Weights:  []string{`{"weight": dyn(90`},
	}, current()); diff != "" {
		t.Errorf("after the rule was removed and the other's weight changed (-want +got):\n%s", diff)
	}
}
