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

package localcluster

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

// script writes an executable shell script named name into dir.
func script(t *testing.T, dir, name, body string) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o755); err != nil { // WriteFile keeps an existing file's mode
		t.Fatal(err)
	}
}

func TestCheckAssetsNamesWhatIsMissing(t *testing.T) {
	dir := t.TempDir()
	script(t, dir, "etcd", "exit 0")
	script(t, dir, "kube-apiserver", "exit 0")
	// Present but not executable.
	if err := os.WriteFile(filepath.Join(dir, "kwok"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := CheckAssets(dir)
	if err == nil {
		t.Fatal("CheckAssets accepted a directory without kube-controller-manager and an executable kwok")
	}
	for _, want := range []string{filepath.Join(dir, "kube-controller-manager"), filepath.Join(dir, "kwok"), "make envtest"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if strings.Contains(err.Error(), filepath.Join(dir, "etcd")+",") {
		t.Errorf("error %q names etcd, which is there", err)
	}
	script(t, dir, "kube-controller-manager", "exit 0")
	script(t, dir, "kwok", "exit 0")
	if err := CheckAssets(dir); err != nil {
		t.Errorf("CheckAssets refused a complete directory: %v", err)
	}
}

func TestErrReportsAnExitedProcess(t *testing.T) {
	dir := t.TempDir()
	script(t, dir, "kwok", `echo "starting $1"; echo "no stages found" >&2; exit 3`)
	cp := &ControlPlane{}
	defer cp.closeLogs()
	p, err := cp.start(dir, dir, "kwok", "--config=x")
	if err != nil {
		t.Fatal(err)
	}
	cp.procs = append(cp.procs, p)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the script did not exit")
	}
	err = cp.Err()
	if err == nil {
		t.Fatal("Err is nil after kwok exited")
	}
	for _, want := range []string{"kwok exited", "exit status 3", "starting --config=x", "no stages found", filepath.Join(dir, "kwok.log")} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

func TestStopIsNotAnError(t *testing.T) {
	dir := t.TempDir()
	// Ignores SIGTERM, so stop has to kill it after the grace period.
	script(t, dir, "kube-controller-manager", `trap "" TERM; while :; do sleep 0.1; done`)
	cp := &ControlPlane{}
	defer cp.closeLogs()
	p, err := cp.start(dir, dir, "kube-controller-manager")
	if err != nil {
		t.Fatal(err)
	}
	cp.procs = append(cp.procs, p)
	time.Sleep(200 * time.Millisecond) // let the shell install its trap
	if err := cp.Err(); err != nil {
		t.Fatalf("Err while running: %v", err)
	}
	start := time.Now()
	if err := p.stop(300 * time.Millisecond); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("stop returned after %v, before the grace period: the process cannot have ignored SIGTERM", d)
	}
	if err := cp.Err(); err != nil {
		t.Errorf("Err after a requested stop: %v", err)
	}
}

// TestKWOKConfig checks the embedded KWOK config's shape: one
// KwokConfiguration with the options a config file must set (it gets no
// defaults), and the stages the cluster relies on. That KWOK accepts it is
// shown by the integration tests, where nodes and pods go Running.
func TestKWOKConfig(t *testing.T) {
	type doc struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Options map[string]any `json:"options"`
		Spec    struct {
			ResourceRef struct {
				Kind string `json:"kind"`
			} `json:"resourceRef"`
		} `json:"spec"`
	}
	stages := map[string]string{}
	var options map[string]any
	for i, part := range strings.Split(string(kwokConfig), "\n---\n") {
		var d doc
		if err := yaml.Unmarshal([]byte(part), &d); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		switch d.Kind {
		case "KwokConfiguration":
			options = d.Options
		case "Stage":
			if d.APIVersion != "kwok.x-k8s.io/v1alpha1" {
				t.Errorf("stage %s: apiVersion %q", d.Metadata.Name, d.APIVersion)
			}
			stages[d.Metadata.Name] = d.Spec.ResourceRef.Kind
		default:
			t.Errorf("document %d: unexpected kind %q", i, d.Kind)
		}
	}
	for _, opt := range []string{"manageAllNodes", "nodeLeaseDurationSeconds", "nodeLeaseParallelism", "nodePlayStageParallelism", "podPlayStageParallelism", "podsOnNodeSyncParallelism"} {
		if _, ok := options[opt]; !ok {
			t.Errorf("KwokConfiguration sets no %s", opt)
		}
	}
	// A bound pod created with the playground's bound-pod annotation stays
	// Pending: the stage that starts pods must require its absence.
	podStart := strings.Split(string(kwokConfig), "name: pod-start\n")
	if len(podStart) != 2 || !strings.Contains(strings.SplitN(podStart[1], "next:", 2)[0],
		`{key: '.metadata.annotations["`+workload.BoundPodAnnotation+`"]', operator: DoesNotExist}`) {
		t.Errorf("stage pod-start does not skip pods annotated %s", workload.BoundPodAnnotation)
	}
	// A Job's pod completes after the delay of CompleteAfterAnnotation.
	podComplete := strings.Split(string(kwokConfig), "name: pod-complete\n")
	if len(podComplete) != 2 || !strings.Contains(strings.SplitN(podComplete[1], "next:", 2)[0],
		`jq: {expression: '.metadata.annotations["`+CompleteAfterAnnotation+`"]'}`) {
		t.Errorf("stage pod-complete takes no delay from the annotation %s", CompleteAfterAnnotation)
	}
	want := map[string]string{"node-start": "Node", "node-heartbeat": "Node", "pod-start": "Pod", "pod-complete": "Pod", "pod-delete": "Pod"}
	for name, kind := range want {
		if stages[name] != kind {
			t.Errorf("stage %s: resource %q, want %q", name, stages[name], kind)
		}
	}
}

// TestGCWrapperSetsGOGC runs a stand-in binary through the wrapper envtest
// is given: it must see GOGC and its arguments, and keep its exit status.
func TestGCWrapperSetsGOGC(t *testing.T) {
	dir := t.TempDir()
	script(t, dir, "kube-apiserver", `echo "GOGC=$GOGC args=$*"; exit 4`)
	wrapper, err := gcWrapper(dir, filepath.Join(dir, "kube-apiserver"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(wrapper, "--help", "a b").Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 4 {
		t.Errorf("wrapper exited with %v, want exit status 4", err)
	}
	if got, want := strings.TrimSpace(string(out)), "GOGC="+gcPercent+" args=--help a b"; got != want {
		t.Errorf("the binary printed %q, want %q", got, want)
	}
}

// TestTokenConfig: Config and KubeConfig authenticate with the static
// token, not envtest's client certificate, and Config speaks protobuf.
func TestTokenConfig(t *testing.T) {
	envtestCfg := &rest.Config{Host: "https://127.0.0.1:6443", TLSClientConfig: rest.TLSClientConfig{
		CAData: []byte("ca"), CertData: []byte("cert"), KeyData: []byte("key"),
	}}
	cfg := tokenConfig(envtestCfg, "s3cret")
	if cfg.BearerToken != "s3cret" || cfg.CertData != nil || cfg.KeyData != nil || string(cfg.CAData) != "ca" {
		t.Errorf("tokenConfig: token %q, cert %q, key %q, CA %q; want the token and the CA only", cfg.BearerToken, cfg.CertData, cfg.KeyData, cfg.CAData)
	}
	if cfg.ContentType != "application/vnd.kubernetes.protobuf" {
		t.Errorf("tokenConfig: content type %q, want protobuf", cfg.ContentType)
	}
	if envtestCfg.CertData == nil {
		t.Error("tokenConfig changed its argument")
	}
	kc, err := kubeconfigFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	back, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		t.Fatal(err)
	}
	if back.Host != cfg.Host || back.BearerToken != "s3cret" || string(back.CAData) != "ca" || back.CertData != nil {
		t.Errorf("kubeconfig reads back as host %q, token %q, CA %q, cert %q", back.Host, back.BearerToken, back.CAData, back.CertData)
	}
	path, token, err := writeTokenFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := token + "," + adminUser + "," + adminUser + `,"system:masters"` + "\n"; string(data) != want || len(token) != 64 {
		t.Errorf("token file %q, want %q with a 64-digit token", data, want)
	}
}

// TestStartRefusesCommaInLogDir: a log directory with a comma would split
// KWOK's --config path in two; Start says so before it starts anything.
func TestStartRefusesCommaInLogDir(t *testing.T) {
	assets := t.TempDir()
	for _, bin := range Binaries {
		if err := os.WriteFile(filepath.Join(assets, bin), []byte("#!/bin/sh\nexit 1\n"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	logDir := filepath.Join(t.TempDir(), "a,b")
	_, err := Start(assets, logDir)
	if err == nil || !strings.Contains(err.Error(), "holds a comma") {
		t.Fatalf("error %v, want the comma named", err)
	}
	if _, statErr := os.Stat(logDir); !os.IsNotExist(statErr) {
		t.Errorf("Start made %s (%v): it must refuse before anything", logDir, statErr)
	}
}

// TestWithPodGroupAPI: the option serves PodGroupAPIVersion where the
// minor has PodGroups, and where it has none makes Start fail, saying so,
// before it starts anything.
func TestWithPodGroupAPI(t *testing.T) {
	var o options
	WithPodGroupAPI()(&o)
	if kubeversion.Has(kubeversion.PodGroups) {
		if o.err != nil || !slices.Contains(o.apiServerArgs, [2]string{"runtime-config", PodGroupAPIVersion + "=true"}) {
			t.Errorf("options %+v, want %s served", o, PodGroupAPIVersion)
		}
		return
	}
	if len(o.apiServerArgs) > 0 || len(o.controllerManagerArgs) > 0 {
		t.Errorf("options %+v, want no flags for an API 1.%d has not", o, kubeversion.Minor)
	}
	logDir := filepath.Join(t.TempDir(), "logs")
	_, err := Start(t.TempDir(), logDir, WithPodGroupAPI())
	if want := kubeversion.Unavailable(kubeversion.PodGroups).Error(); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Start: %v, want %q", err, want)
	}
	if _, statErr := os.Stat(logDir); !os.IsNotExist(statErr) {
		t.Errorf("Start made %s (%v): it must refuse before anything", logDir, statErr)
	}
}

// TestWithMutatingAdmissionPolicy: the option switches on what the minor
// needs to serve MutatingAdmissionPolicies: nothing from 1.36, v1beta1 and
// its gate on 1.35.
func TestWithMutatingAdmissionPolicy(t *testing.T) {
	var o options
	WithMutatingAdmissionPolicy()(&o)
	var want [][2]string
	if !kubeversion.Has(kubeversion.MutatingAdmissionPolicyV1) {
		want = [][2]string{{"feature-gates", "MutatingAdmissionPolicy=true"}, {"runtime-config", "admissionregistration.k8s.io/v1beta1=true"}}
	}
	if !slices.Equal(o.apiServerArgs, want) || o.controllerManagerArgs != nil || o.err != nil {
		t.Errorf("options %+v, want API server flags %v only", o, want)
	}
}

// TestAssetsFromEnv: $KUBEBUILDER_ASSETS wins over the repository's bin/,
// and what is found is checked.
func TestAssetsFromEnv(t *testing.T) {
	full := t.TempDir()
	for _, bin := range Binaries {
		script(t, full, bin, "exit 0")
	}
	empty := t.TempDir()
	t.Setenv("KUBEBUILDER_ASSETS", full)
	if got, err := AssetsFromEnv(empty); err != nil || got != full {
		t.Errorf("with KUBEBUILDER_ASSETS: %q, %v; want %q", got, err, full)
	}
	t.Setenv("KUBEBUILDER_ASSETS", "")
	if got, err := AssetsFromEnv(full); err != nil || got != full {
		t.Errorf("without it: %q, %v; want %q", got, err, full)
	}
	if _, err := AssetsFromEnv(empty); err == nil {
		t.Errorf("a directory without the binaries was accepted")
	}
}
