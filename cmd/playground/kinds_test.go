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
	"strings"
	"testing"
)

// TestAnyKind runs a scenario of kinds the playground has no rule for
// (testdata/any-kind.yaml) end to end: every object is applied, in
// dependency order (the Namespace before the objects in it, the CRD before
// its Widget, whatever the file order), the Deployment's pods run with the
// PriorityClass, and the steps scale the Deployment and delete the Widget.
func TestAnyKind(t *testing.T) {
	code, out, stderr := runPlayground(t, "--config", shippedConfig, "--scenario", "testdata/any-kind.yaml", "--output", "json")
	if code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
	r := decodeResult(t, out)
	if len(r.Pods) != 1 || r.Pods[0].Node == "" || r.Pods[0].Object != "Deployment/web" || r.Pods[0].Namespace != "payments" {
		t.Errorf("pods %+v, want the one replica of payments/web left by the scale step, bound", r.Pods)
	}
	if len(r.Steps) != 2 || !strings.Contains(r.Steps[1].Step, "delete Widget payments/w") {
		t.Errorf("steps %+v, want the scale and the Widget's delete", r.Steps)
	}
	if !strings.Contains(stderr, "waiting for CustomResourceDefinition widgets.example.com to be established") {
		t.Errorf("progress does not say the CRD was waited for:\n%s", stderr)
	}
}
