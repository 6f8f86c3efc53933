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

func writeFile(t *testing.T, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCheckPolicyShippedPolicies(t *testing.T) {
	paths, err := filepath.Glob("../../../manifests/descheduler/*-policy.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no shipped policy found: %v", err)
	}
	for _, p := range paths {
		if err := checkPolicy(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

const misCased = `apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
  - name: p
    plugins:
      filter: {enabled: [PolicyEvictor]}
      preEvictionFilter: {enabled: [PolicyEvictor]}
`

// Upstream's loader takes the mis-cased key without a word, which is why
// the command checks the file first.
func TestUpstreamDropsMisCasedKey(t *testing.T) {
	policy, err := loadPolicy(t, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(policy.Profiles[0].Plugins.PreEvictionFilter.Enabled) == 0 {
		t.Fatal("the lower-case key did not enable PolicyEvictor at preevictionfilter")
	}
	preRun(t)
	path := writeFile(t, misCased)
	if err := checkPolicy(path); err == nil || !strings.Contains(err.Error(), `unknown field "profiles[0].plugins.preEvictionFilter"`) ||
		!strings.Contains(err.Error(), "preevictionfilter") {
		t.Fatalf("checkPolicy = %v, want the mis-cased key named and the right spelling given", err)
	}
}

func TestCheckPolicyErrors(t *testing.T) {
	big := writeFile(t, "# "+strings.Repeat("x", maxPolicyBytes))
	tests := []struct{ name, path, want string }{
		{"no file given", "", ""},
		{"missing", filepath.Join(t.TempDir(), "none.yaml"), "no such file"},
		{"too large", big, "larger than 1048576 bytes"},
		{"not YAML", writeFile(t, "profiles: [\n"), "--policy-config-file"},
		{"unknown top-level key", writeFile(t, "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nmaxNoOfPodsToEvictPerNod: 1\n"),
			`unknown field "maxNoOfPodsToEvictPerNod"`},
		{"duplicate key", writeFile(t, "kind: DeschedulerPolicy\nkind: DeschedulerPolicy\n"), "kind"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkPolicy(tc.path)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("checkPolicy: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("checkPolicy = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
