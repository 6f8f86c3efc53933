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
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/controllerrun"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/admission"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

// TestRunBadInput: every refusal names the flag or file. A process
// applies its logging flags once, so the cases past flag parsing call
// runController, which the command runs after them.
func TestRunBadInput(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"run"}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), `required flag(s) "config" not set`) {
		t.Errorf("run without --config: exit code %d, stderr %q", code, stderr.String())
	}
	dir := t.TempDir()
	noArgs := filepath.Join(dir, "none.yaml")
	if err := os.WriteFile(noArgs, []byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := func(edit func(*runFlags)) runFlags {
		f := runFlags{configFile: noArgs, workers: 1}
		f.leaderElection = leaderElectionDefaults(t)
		edit(&f)
		return f
	}
	for _, tt := range []struct {
		name, want string
		flags      runFlags
	}{
		{"no workers", "--workers (0) must be at least 1", flags(func(f *runFlags) { f.workers = 0 })},
		{"lease shorter than the renew deadline", "--leader-elect-lease-duration (5s) must be longer than --leader-elect-renew-deadline (10s)",
			flags(func(f *runFlags) { f.leaderElection.LeaseDuration = 5 * time.Second })},
		{"no policies", "no profile holds OnDemandShare policies: nothing to decide", flags(func(f *runFlags) { f.leaderElection.Enabled = false })},
		{"missing file", "no such file or directory", flags(func(f *runFlags) { f.configFile = filepath.Join(dir, "nope.yaml") })},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := runController(context.Background(), tt.flags)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one that contains %q", err, tt.want)
			}
		})
	}
}

// leaderElectionDefaults is the leader election as parsed with no flag set.
func leaderElectionDefaults(t *testing.T) controllerrun.LeaderElection {
	t.Helper()
	var l controllerrun.LeaderElection
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	l.AddFlags(fs, "ondemandshare-controller")
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestLoadPolicies: a policy two profiles hold is one policy.
func TestLoadPolicies(t *testing.T) {
	policies, err := loadPolicies("testdata/scheduler-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range policies {
		names = append(names, p.Name)
	}
	if got, want := strings.Join(names, ","), "batch,web"; got != want {
		t.Errorf("policies %s, want %s", got, want)
	}
}

// TestRunDecides runs the command against a real control plane, after
// render --apply applied the policy of its config: the Deployment
// controller's 4 pods are gated at creation, and the run decides them, 2
// on-demand at 50%.
func TestRunDecides(t *testing.T) {
	cp, client, configPath := startControlPlane(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, stderr, code := render(t, "--config", configPath, "--apply", "--kubeconfig", cp.KubeconfigPath); code != 0 {
		t.Fatalf("render --apply: exit code %d: %s", code, stderr)
	}
	if err := admission.Renderer.WaitInForce(ctx, client, "default", time.Minute); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		f := runFlags{configFile: configPath, kubeconfig: cp.KubeconfigPath, workers: 2}
		f.leaderElection = leaderElectionDefaults(t)
		f.leaderElection.Namespace = "default"
		done <- runController(ctx, f)
	}()

	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](4),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}},
		},
	}
	if _, err := client.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var classes map[string]int
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, nil
		}
		classes = map[string]int{}
		for _, p := range pods.Items {
			if len(p.Spec.SchedulingGates) > 0 {
				return false, nil
			}
			classes[p.Labels[share.ClassLabel]]++
		}
		return len(pods.Items) == 4, nil
	})
	if err != nil {
		t.Fatalf("the run did not decide the 4 pods: %v (classes %v)", err, classes)
	}
	if classes[string(share.OnDemand)] != 2 || classes[string(share.Spot)] != 2 {
		t.Errorf("classes %v, want 2 on-demand and 2 spot", classes)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run after its context ended: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("run did not return 30s after its context ended")
	}
}
