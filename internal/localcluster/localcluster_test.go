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
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
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
	want := map[string]string{"node-start": "Node", "node-heartbeat": "Node", "pod-start": "Pod", "pod-complete": "Pod", "pod-delete": "Pod"}
	for name, kind := range want {
		if stages[name] != kind {
			t.Errorf("stage %s: resource %q, want %q", name, stages[name], kind)
		}
	}
}
