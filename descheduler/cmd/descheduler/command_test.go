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
	"time"

	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/descheduler/pkg/api"
	"sigs.k8s.io/descheduler/pkg/descheduler"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"
	"sigs.k8s.io/descheduler/pkg/framework/plugins/defaultevictor"

	"github.com/adminsched/scheduler-plugins/descheduler/pkg/policyevictor"
)

// preRun runs the command's PreRunE, which resets the global registry and
// fills it, as the binary does before it loads a policy.
func preRun(t *testing.T) {
	t.Helper()
	cmd := newCommand()
	if err := cmd.PreRunE(cmd, nil); err != nil {
		t.Fatalf("PreRunE: %v", err)
	}
}

// TestPreRunERegistersPolicyEvictor: upstream's PreRunE replaces the
// registry, so ours must be added after it, beside upstream's plugins.
func TestPreRunERegistersPolicyEvictor(t *testing.T) {
	pluginregistry.PluginRegistry = nil
	preRun(t)
	for _, name := range []string{policyevictor.PluginName, defaultevictor.PluginName} {
		if _, ok := pluginregistry.PluginRegistry[name]; !ok {
			t.Errorf("plugin %s is not in the registry after PreRunE", name)
		}
	}
}

// writePolicy writes a descheduler/v1alpha2 policy enabling PolicyEvictor
// with args (YAML flow mapping entries after schedulerConfig).
func writePolicy(t *testing.T, args string) string {
	t.Helper()
	cfg, err := filepath.Abs("../../pkg/policyevictor/testdata/scheduler-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	policy := `apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
  - name: residency
    pluginConfig:
      - name: PolicyEvictor
        args: {schedulerConfig: ` + cfg + args + `}
    plugins:
      filter: {enabled: [PolicyEvictor]}
      preevictionfilter: {enabled: [PolicyEvictor]}
`
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func loadPolicy(t *testing.T, args string) (*api.DeschedulerPolicy, error) {
	t.Helper()
	preRun(t)
	return descheduler.LoadPolicyConfig(writePolicy(t, args), fake.NewClientset(), pluginregistry.PluginRegistry)
}

func TestPolicyUnknownArgsFieldFails(t *testing.T) {
	_, err := loadPolicy(t, ", schedulerNme: policies")
	if err == nil || !strings.Contains(err.Error(), `unknown field "schedulerNme"`) {
		t.Fatalf("LoadPolicyConfig = %v, want the unknown field refused", err)
	}
}

// TestPolicyUnsetFieldsValidateThenDefault: the descheduler validates
// before it defaults, so unset fields must pass and then be filled.
func TestPolicyUnsetFieldsValidateThenDefault(t *testing.T) {
	policy, err := loadPolicy(t, "")
	if err != nil {
		t.Fatalf("LoadPolicyConfig: %v", err)
	}
	var args *policyevictor.PolicyEvictorArgs
	for _, pc := range policy.Profiles[0].PluginConfigs {
		if pc.Name == policyevictor.PluginName {
			args, _ = pc.Args.(*policyevictor.PolicyEvictorArgs)
		}
	}
	if args == nil {
		t.Fatalf("no PolicyEvictorArgs in %+v", policy.Profiles[0].PluginConfigs)
	}
	if args.Preferred != policyevictor.PreferredRespect || args.AdmittedTTL == nil || args.AdmittedTTL.Duration != 2*time.Minute {
		t.Fatalf("args = %+v, want them defaulted", args)
	}
}

func TestPolicyInvalidArgsFail(t *testing.T) {
	_, err := loadPolicy(t, ", schedulerName: nope")
	if err == nil || !strings.Contains(err.Error(), `schedulerName: Not found: "nope"`) {
		t.Fatalf("LoadPolicyConfig = %v, want the field path of the error", err)
	}
}
