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

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/adminsched/scheduler-plugins/internal/localcluster"
	"github.com/adminsched/scheduler-plugins/pkg/admissionpolicy"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/admission"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

// startControlPlane starts a real control plane with the admission policy
// API and writes a scheduler config with the policy web (default, 50%).
func startControlPlane(t *testing.T) (*localcluster.ControlPlane, kubernetes.Interface, string) {
	t.Helper()
	assets, err := localcluster.AssetsFromEnv("../../bin")
	if err != nil {
		t.Fatalf("this test needs a real control plane: %v", err)
	}
	cp, err := localcluster.Start(assets, t.TempDir(), localcluster.WithMutatingAdmissionPolicy())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	configPath := filepath.Join(t.TempDir(), "scheduler-config.yaml")
	if err := os.WriteFile(configPath, []byte(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: OnDemandShare
    args:
      policies:
      - {name: web, namespaces: [default], minOnDemandPercent: 50}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	return cp, kubernetes.NewForConfigOrDie(cp.Config), configPath
}

// TestRenderApplyDelete: render --apply server-side applies the policy of
// its config and deletes one it applied for an earlier config; render
// --delete deletes every one it applied. Neither touches a policy it does
// not own.
func TestRenderApplyDelete(t *testing.T) {
	cp, client, configPath := startControlPlane(t)
	ctx := context.Background()
	// A policy an earlier config had, which --apply must delete, and one
	// render does not own (no policy label, as WaitInForce's canary), which
	// it must keep.
	stale := admission.Renderer.ObjectMeta("gone", map[string]string{share.PolicyLabel: "gone"}, nil)
	foreign := admission.Renderer.ObjectMeta("canary-x", nil, nil)
	for _, meta := range []metav1.ObjectMeta{stale, foreign} {
		pair := admissionpolicy.PodPolicy{Meta: meta, Patches: []string{"true ? [] : [JSONPatch{op: 'test', path: '/kind', value: 'Pod'}]"}, FailurePolicy: admissionpolicy.Ignore}.Render()
		if err := admissionpolicy.Apply(ctx, client, []admissionpolicy.Pair{pair}); err != nil {
			t.Fatal(err)
		}
	}
	api := admissionpolicy.Client(client)
	exists := func(name string) bool {
		t.Helper()
		_, errPolicy := api.MutatingAdmissionPolicies().Get(ctx, name, metav1.GetOptions{})
		_, errBinding := api.MutatingAdmissionPolicyBindings().Get(ctx, name, metav1.GetOptions{})
		for _, err := range []error{errPolicy, errBinding} {
			if err != nil && !apierrors.IsNotFound(err) {
				t.Fatal(err)
			}
		}
		if (errPolicy == nil) != (errBinding == nil) {
			t.Errorf("%s: the policy (%v) and its binding (%v) differ", name, errPolicy, errBinding)
		}
		return errPolicy == nil
	}

	if _, stderr, code := render(t, "--config", configPath, "--apply", "--kubeconfig", cp.KubeconfigPath); code != 0 {
		t.Fatalf("render --apply: exit code %d: %s", code, stderr)
	}
	b, err := api.MutatingAdmissionPolicyBindings().Get(ctx, "ondemandshare-web", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("render --apply did not apply ondemandshare-web: %v", err)
	}
	if !appliedBy(b.ManagedFields, "ondemandshare-controller") {
		t.Errorf("ondemandshare-web was not server-side applied by ondemandshare-controller: %v", b.ManagedFields)
	}
	if exists(stale.Name) {
		t.Errorf("render --apply kept %s, which the config no longer has", stale.Name)
	}
	if !exists(foreign.Name) {
		t.Errorf("render --apply deleted %s, which it does not own", foreign.Name)
	}

	stdout, stderr, code := render(t, "--delete", "--kubeconfig", cp.KubeconfigPath)
	if code != 0 || stdout != "" {
		t.Fatalf("render --delete: exit code %d, stdout %q: %s", code, stdout, stderr)
	}
	if exists("ondemandshare-web") {
		t.Error("render --delete kept ondemandshare-web")
	}
	if !exists(foreign.Name) {
		t.Errorf("render --delete deleted %s, which it does not own", foreign.Name)
	}
}

// TestRenderClusterFlags: flags that contradict each other are refused
// before any API server is called.
func TestRenderClusterFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--config", testConfig, "--apply", "--delete"}, "--apply and --delete contradict each other"},
		{[]string{"--config", testConfig, "--apply", "--output-file", filepath.Join(t.TempDir(), "x")}, "--output-file writes the policies to a file"},
		{[]string{"--config", testConfig, "--kubeconfig", "k"}, "--kubeconfig is for --apply or --delete"},
		{[]string{"--apply"}, "--config is required"},
	} {
		_, stderr, code := render(t, tt.args...)
		if code != 1 || !strings.Contains(stderr, tt.want) {
			t.Errorf("render %v: exit code %d, stderr %q, want 1 and %q", tt.args, code, stderr, tt.want)
		}
	}
}

// appliedBy reports whether manager server-side applied the object.
func appliedBy(fields []metav1.ManagedFieldsEntry, manager string) bool {
	for _, f := range fields {
		if f.Manager == manager && f.Operation == metav1.ManagedFieldsOperationApply {
			return true
		}
	}
	return false
}
