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
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/adminsched/scheduler-plugins/internal/playground"
)

// TestKeepKubectlRun is the README's cluster to try by hand, as a newcomer
// types it: the banner's export line, applied by a shell that has no
// kubectl on its PATH, reaches the cluster with the kubectl next to the
// control plane's binaries (bin/kubectl, `make kubectl`), and a pod made by
// `kubectl run`, which names no scheduler, is bound and Running, by the
// default scheduler, as on a real cluster. It stayed Pending, with no
// event, when only the config's profiles were served.
func TestKeepKubectlRun(t *testing.T) {
	if kubectlDir(assets) == "" {
		t.Fatalf("this test runs the kubectl of %s: build it with `make kubectl`", assets)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("this test runs the banner's export line in bash: %v", err)
	}
	k := keepRunAll(t, "--config", shippedConfig, "--scenario", scenarios+"tutorial-nodes.yaml")
	abs, err := filepath.Abs(assets)
	if err != nil {
		t.Fatal(err)
	}
	want := "\nthe control plane and the scheduler stay up until Ctrl-C.\n" +
		"pods naming schedulerName: custom-scheduler get this config's profile; pods naming none get the default profile (default-scheduler, the in-tree plugins).\n" +
		"in another shell:\n" +
		"  export KUBECONFIG=" + k.kubeconfig + " PATH=" + abs + ":$PATH\n" +
		"  kubectl get pods -A -o wide\n"
	if !strings.HasSuffix(k.stderr, want) {
		t.Errorf("stderr does not end with the banner\n%s\ngot:\n%s", want, k.stderr)
	}
	// It starts after the run: the results know nothing of it.
	if strings.Contains(k.stdout, "default-scheduler") {
		t.Errorf("the results name the default scheduler:\n%s", k.stdout)
	}
	export := exportRE.FindStringSubmatch(k.stderr)[1]
	script := export + `
kubectl run plain --image=nginx
kubectl wait --for=jsonpath='{.status.phase}'=Running pod/plain --timeout=60s
kubectl get pod plain -o jsonpath='{.spec.schedulerName} {.spec.nodeName}{"\n"}'
`
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, "-euo", "pipefail", "-c", script)
	// No kubectl but the export line's, and no KUBECONFIG but its.
	cmd.Env = []string{"PATH=" + t.TempDir(), "HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	t.Logf("%s\n%s", script, out)
	if err != nil {
		t.Fatalf("the banner's commands: %v", err)
	}
	if !strings.Contains(string(out), "pod/plain condition met\ndefault-scheduler tutorial-") {
		t.Errorf("want pod/plain Running on a tutorial node, scheduled by default-scheduler")
	}
}

// TestKeepOwnDefaultScheduler: a config whose profile is named
// default-scheduler serves the pods that name none itself: no other
// scheduler starts, and the banner says so.
func TestKeepOwnDefaultScheduler(t *testing.T) {
	config := writeFile(t, "config.yaml", `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
      multiPoint:
        enabled:
          - name: NodeLessPods
`)
	k := keepRunAll(t, "--config", config, "--scenario", scenarios+"tutorial-nodes.yaml")
	if strings.Contains(k.stderr, "starting the default scheduler") {
		t.Errorf("another default scheduler started")
	}
	if want := "\nevery pod naming no schedulerName (or default-scheduler) gets this config's profile.\n"; !strings.Contains(k.stderr, want) {
		t.Errorf("the banner does not say %q", want)
	}
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: "default"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
	}
	if _, err := k.client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := k.client.CoreV1().Pods("default").Get(ctx, "plain", metav1.GetOptions{})
		return err == nil && p.Spec.NodeName != "", nil
	})
	if err != nil {
		t.Errorf("the pod naming no scheduler was not bound: %v", err)
	}
}

// TestKeepBanner: what the banner says of who schedules which pods, for
// each shape of config, and its export line when no kubectl is at hand or
// a path needs quoting.
func TestKeepBanner(t *testing.T) {
	withKubectl := t.TempDir()
	if err := os.WriteFile(filepath.Join(withKubectl, "kubectl"), []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	quoted := filepath.Join(t.TempDir(), "it's here")
	if err := os.Mkdir(quoted, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(quoted, "kubectl"), []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	noKubectl := t.TempDir()
	const head = "\nthe control plane and the scheduler stay up until Ctrl-C.\n"
	for _, tt := range []struct {
		name    string
		session playground.Session
		assets  string
		want    string
	}{
		{"one profile and the default scheduler",
			playground.Session{Kubeconfig: "/tmp/p/kubeconfig", Profiles: []string{"custom-scheduler"}, DefaultScheduler: true}, withKubectl,
			head + "pods naming schedulerName: custom-scheduler get this config's profile; pods naming none get the default profile (default-scheduler, the in-tree plugins).\n" +
				"in another shell:\n  export KUBECONFIG=/tmp/p/kubeconfig PATH=" + withKubectl + ":$PATH\n  kubectl get pods -A -o wide\n"},
		{"three profiles and the default scheduler",
			playground.Session{Kubeconfig: "/tmp/p/kubeconfig", Profiles: []string{"a", "b", "c"}, DefaultScheduler: true}, withKubectl,
			head + "pods naming schedulerName: a, b or c get this config's profile of that name; pods naming none get the default profile (default-scheduler, the in-tree plugins).\n" +
				"in another shell:\n  export KUBECONFIG=/tmp/p/kubeconfig PATH=" + withKubectl + ":$PATH\n  kubectl get pods -A -o wide\n"},
		{"the config's own default-scheduler, no kubectl",
			playground.Session{Kubeconfig: "/tmp/p/kubeconfig", Profiles: []string{"default-scheduler"}}, noKubectl,
			head + "every pod naming no schedulerName (or default-scheduler) gets this config's profile.\n" +
				"in another shell:\n  export KUBECONFIG=/tmp/p/kubeconfig\n  kubectl get pods -A -o wide\n" +
				"(no kubectl next to the control plane's binaries in " + noKubectl + ": `make kubectl` in the clone builds bin/kubectl, or use yours)\n"},
		{"the OnDemandShare controller runs too",
			playground.Session{Kubeconfig: "/tmp/p/kubeconfig", Profiles: []string{"default-scheduler"}, ShareController: true}, noKubectl,
			"\nthe control plane, the scheduler and the OnDemandShare controller stay up until Ctrl-C.\n" +
				"every pod naming no schedulerName (or default-scheduler) gets this config's profile.\n" +
				"in another shell:\n  export KUBECONFIG=/tmp/p/kubeconfig\n  kubectl get pods -A -o wide\n" +
				"(no kubectl next to the control plane's binaries in " + noKubectl + ": `make kubectl` in the clone builds bin/kubectl, or use yours)\n"},
		{"default-scheduler among others, a path to quote",
			playground.Session{Kubeconfig: "/tmp/p q/kubeconfig", Profiles: []string{"default-scheduler", "custom-scheduler"}}, quoted,
			head + "pods naming schedulerName: default-scheduler or custom-scheduler get this config's profile of that name; a pod naming none names default-scheduler.\n" +
				"in another shell:\n  export KUBECONFIG='/tmp/p q/kubeconfig' PATH='" + strings.ReplaceAll(quoted, "'", `'\''`) + "':$PATH\n  kubectl get pods -A -o wide\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, keepBanner(&tt.session, tt.assets)); diff != "" {
				t.Errorf("banner (-want +got):\n%s", diff)
			}
		})
	}
}
