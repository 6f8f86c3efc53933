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
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOnDemandSharePolicyTest: the on-demand share scenario's expectations
// hold after every step with the admission policy and the controller
// (--admission-policies), and fail when the minimum is raised beyond what
// the on-demand nodes hold. TestPolicyTestExamples runs it without the
// flag: the guard plugin alone holds it too.
func TestOnDemandSharePolicyTest(t *testing.T) {
	const file = scenarios + "ondemand-share.yaml"
	t.Run("with the controller", func(t *testing.T) {
		code, out, stderr := runTestCommand(t, "--admission-policies", file)
		if code != exitOK {
			t.Fatalf("exit code %d, want %d; stderr:\n%s", code, exitOK, stderr)
		}
		if !strings.Contains(out, "8 passed, 0 failed") {
			t.Errorf("want 8 assertions passed:\n%s", out)
		}
		for _, want := range []string{
			"applying the MutatingAdmissionPolicies rendered from " + scenarios + "ondemand-share-config.yaml: ondemandshare-web\n",
			"starting the OnDemandShare controller (1 policy)",
			"on-demand share: Deployment shop/web: 3/3 on-demand of 10 pods (policy web)\n",
			"on-demand share: Deployment shop/web: 6/6 on-demand of 20 pods (policy web)\n",
			"on-demand share: Deployment shop/web: 2/2 on-demand of 5 pods (policy web)\n",
		} {
			if !strings.Contains(stderr, want) {
				t.Errorf("progress lacks %q:\n%s", want, stderr)
			}
		}
	})
	t.Run("minimum raised beyond the on-demand nodes", func(t *testing.T) {
		data, err := os.ReadFile(scenarios + "ondemand-share-config.yaml")
		if err != nil {
			t.Fatal(err)
		}
		raised := strings.Replace(string(data), "minOnDemandPercent: 30", "minOnDemandPercent: 50", 1)
		if raised == string(data) {
			t.Fatal("the shipped config has no minOnDemandPercent: 30 to raise")
		}
		config := filepath.Join(t.TempDir(), "raised.yaml")
		if err := os.WriteFile(config, []byte(raised), 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, stderr := runTestCommand(t, "--admission-policies", "--config", config, file)
		if code != exitTestFailed {
			t.Fatalf("exit code %d, want %d; stderr:\n%s", code, exitTestFailed, stderr)
		}
		// 20 replicas need 10 on-demand pods; the two on-demand nodes
		// hold 8.
		for _, want := range []string{
			"6 passed, 2 failed",
			"FAIL  expect[2] 20 replicas, every pod runs\n        after step 1 (scale Deployment shop/web to 20): 2 of 20 pods are not on any node",
			"FAIL  expect[4] spot-1 lost, its pods run again on the other spot nodes\n        after step 2 (delete nodes spot-1): 2 of 20 pods are not on nodes on-demand-1, on-demand-2, spot-2, spot-3, spot-4",
			"PASS  expect[6] 5 replicas, every pod runs",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if !strings.Contains(stderr, "on-demand share: Deployment shop/web: 8/10 on-demand of 20 pods (policy web), BELOW THE MINIMUM\n") {
			t.Errorf("progress does not say the share is below the minimum:\n%s", stderr)
		}
	})
}
