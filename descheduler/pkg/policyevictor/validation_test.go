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

package policyevictor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const testConfig = "testdata/scheduler-config.yaml"

// twoProfiles writes a scheduler config in which two profiles run
// PlacementPolicy, so that an empty schedulerName is ambiguous.
func twoProfiles(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "two.yaml")
	data := `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: first
    plugins: {multiPoint: {enabled: [{name: PlacementPolicy}]}}
  - schedulerName: second
    plugins: {filter: {enabled: [{name: MaintenanceWindow}]}}
`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestValidateArgs(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(big, make([]byte, maxConfigBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	two := twoProfiles(t)
	tests := []struct {
		name string
		args PolicyEvictorArgs
		want string // substring of the error; empty for none
	}{
		{name: "unset optional fields, before defaulting", args: PolicyEvictorArgs{SchedulerConfig: testConfig}},
		{name: "all set", args: PolicyEvictorArgs{SchedulerConfig: testConfig, SchedulerName: "policies",
			Preferred: PreferredIgnore, AdmittedTTL: &metav1.Duration{Duration: time.Minute}, NodeSelector: "pool=general"}},
		{name: "no config", args: PolicyEvictorArgs{}, want: "schedulerConfig: Required value"},
		{name: "config missing", args: PolicyEvictorArgs{SchedulerConfig: "testdata/none.yaml"},
			want: `schedulerConfig: Invalid value: "testdata/none.yaml"`},
		{name: "config too large", args: PolicyEvictorArgs{SchedulerConfig: big}, want: "at most 1048576 bytes"},
		{name: "unknown profile", args: PolicyEvictorArgs{SchedulerConfig: testConfig, SchedulerName: "x"},
			want: `schedulerName: Not found: "x"`},
		{name: "profile without our plugins", args: PolicyEvictorArgs{SchedulerConfig: testConfig, SchedulerName: "default-scheduler"}},
		{name: "ambiguous", args: PolicyEvictorArgs{SchedulerConfig: two}, want: "profiles first, second run"},
		{name: "named among several", args: PolicyEvictorArgs{SchedulerConfig: two, SchedulerName: "second"}},
		{name: "bad preferred", args: PolicyEvictorArgs{SchedulerConfig: testConfig, Preferred: "Sometimes"},
			want: `preferred: Unsupported value: "Sometimes"`},
		{name: "zero ttl", args: PolicyEvictorArgs{SchedulerConfig: testConfig, AdmittedTTL: &metav1.Duration{}},
			want: "admittedTTL: Invalid value: \"0s\": must be positive"},
		{name: "bad node selector", args: PolicyEvictorArgs{SchedulerConfig: testConfig, NodeSelector: "a in (b"},
			want: "nodeSelector: Invalid value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateArgs(&tc.args)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("ValidateArgs: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("ValidateArgs = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestLoadPoliciesPicksTheProfile(t *testing.T) {
	pol, errs := loadPolicies(&PolicyEvictorArgs{SchedulerConfig: testConfig})
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	if pol.profile != "policies" || pol.placement == nil || len(pol.placement.Rules) != 2 || pol.windows == nil ||
		pol.windows.ExemptPodSelector == nil {
		t.Fatalf("policies = %+v, want profile policies with its 2 rules and its windows", pol)
	}
	// MaintenanceWindow without pluginConfig gets the scheduler's defaults.
	pol, errs = loadPolicies(&PolicyEvictorArgs{SchedulerConfig: twoProfiles(t), SchedulerName: "second"})
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	if pol.placement != nil || pol.windows == nil || pol.windows.AnnotationKey == "" {
		t.Fatalf("policies = %+v, want defaulted windows only", pol)
	}
}

func TestDefault(t *testing.T) {
	args := &PolicyEvictorArgs{SchedulerConfig: testConfig}
	Default(args)
	if args.Preferred != PreferredRespect || args.AdmittedTTL == nil || args.AdmittedTTL.Duration != DefaultAdmittedTTL ||
		args.SchedulerName != "" {
		t.Fatalf("defaulted = %+v, want Respect and 2m, schedulerName left to New", args)
	}
	set := &PolicyEvictorArgs{Preferred: PreferredIgnore, AdmittedTTL: &metav1.Duration{Duration: time.Second}}
	Default(set)
	if set.Preferred != PreferredIgnore || set.AdmittedTTL.Duration != time.Second {
		t.Fatalf("defaulted = %+v, want the set fields kept", set)
	}
}
