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

package admission

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/pkg/admissionpolicy"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

func policy(name string, kinds ...config.WorkloadKind) config.OnDemandSharePolicy {
	if len(kinds) == 0 {
		kinds = []config.WorkloadKind{config.WorkloadDeployment, config.WorkloadStatefulSet, config.WorkloadJob}
	}
	return config.OnDemandSharePolicy{Name: name, Namespaces: []string{"shop"}, WorkloadKinds: kinds, MinOnDemandCount: 1}
}

// TestRenderOrderAndGroups: policies come out by name, one per name across
// profiles; only the later ones carry the variable that defers to the
// earlier ones, which names each earlier policy.
func TestRenderOrderAndGroups(t *testing.T) {
	res, err := Render([]ProfileArgs{
		{SchedulerName: "a", Args: &config.OnDemandShareArgs{Policies: []config.OnDemandSharePolicy{policy("web"), policy("batch")}}},
		{SchedulerName: "b", Args: &config.OnDemandShareArgs{Policies: []config.OnDemandSharePolicy{policy("batch"), policy("api")}}},
		{SchedulerName: "no-args"},
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	type rendered struct {
		Name, Policy, Label, Profiles string
		Deferred                      []string
	}
	var got []rendered
	for _, p := range res.Policies {
		spec := p.Policy.Spec
		r := rendered{Name: p.Policy.Name, Policy: p.Name, Label: p.Policy.Labels[share.PolicyLabel], Profiles: p.Policy.Annotations[ProfilesAnnotation]}
		for _, v := range spec.Variables {
			for _, e := range []string{"api", "batch", "web"} {
				if strings.Contains(v.Expression, "// "+e+"\n") {
					r.Deferred = append(r.Deferred, e)
				}
			}
		}
		if *spec.FailurePolicy != admissionpolicy.Ignore || spec.ReinvocationPolicy != "Never" || p.Binding.Spec.PolicyName != p.Policy.Name {
			t.Errorf("%s: failurePolicy %s, reinvocationPolicy %s, binding of %s", p.Policy.Name, *spec.FailurePolicy, spec.ReinvocationPolicy, p.Binding.Spec.PolicyName)
		}
		got = append(got, r)
	}
	want := []rendered{
		{Name: "ondemandshare-api", Policy: "api", Label: "api", Profiles: "b"},
		{Name: "ondemandshare-batch", Policy: "batch", Label: "batch", Profiles: "a,b", Deferred: []string{"api"}},
		{Name: "ondemandshare-web", Policy: "web", Label: "web", Profiles: "a", Deferred: []string{"api", "batch"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("policies (-want +got):\n%s", diff)
	}
}

func TestRenderErrors(t *testing.T) {
	args := func(excluded []string, ps ...config.OnDemandSharePolicy) *config.OnDemandShareArgs {
		return &config.OnDemandShareArgs{ExcludedNamespaces: excluded, Policies: ps}
	}
	other := policy("web")
	other.MinOnDemandCount = 2
	for _, tt := range []struct {
		name     string
		profiles []ProfileArgs
		opts     Options
		want     string
	}{
		{"unknown failure policy", nil, Options{FailurePolicy: "Sometimes"}, `failure policy "Sometimes": must be Ignore or Fail`},
		{"one name, two policies", []ProfileArgs{{SchedulerName: "a", Args: args(nil, policy("web"))}, {SchedulerName: "b", Args: args(nil, other)}},
			Options{}, `policy "web": profiles "a" and "b" hold different policies of that name`},
		{"one name, other exclusions", []ProfileArgs{{SchedulerName: "a", Args: args(nil, policy("web"))}, {SchedulerName: "b", Args: args([]string{"ops"}, policy("web"))}},
			Options{}, `policy "web": profiles "a" and "b" hold different policies of that name (or exclude different namespaces)`},
		{"no workload kind", []ProfileArgs{{SchedulerName: "a", Args: args(nil, config.OnDemandSharePolicy{Name: "web"})}},
			Options{}, `policy "web": workloadKinds is empty: the args must be defaulted`},
		{"unknown workload kind", []ProfileArgs{{SchedulerName: "a", Args: args(nil, policy("web", "DaemonSet"))}},
			Options{}, `policy "web": workloadKinds: "DaemonSet": must be Deployment, ReplicaSet, StatefulSet or Job`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Render(tt.profiles, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Render: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestFromConfig(t *testing.T) {
	held := &config.OnDemandShareArgs{Policies: []config.OnDemandSharePolicy{policy("web")}}
	cfg := &schedconfig.KubeSchedulerConfiguration{Profiles: []schedconfig.KubeSchedulerProfile{
		{SchedulerName: "none"},
		{SchedulerName: "holds", PluginConfig: []schedconfig.PluginConfig{{Name: config.OnDemandShareName, Args: held}}},
		{SchedulerName: "other-plugin", PluginConfig: []schedconfig.PluginConfig{{Name: config.PlacementPolicyName, Args: &config.PlacementPolicyArgs{}}}},
	}}
	got, err := FromConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]ProfileArgs{{SchedulerName: "holds", Args: held}}, got); diff != "" {
		t.Errorf("profiles (-want +got):\n%s", diff)
	}
	cfg.Profiles[0].PluginConfig = []schedconfig.PluginConfig{{Name: config.OnDemandShareName, Args: &config.PlacementPolicyArgs{}}}
	if _, err := FromConfig(cfg); err == nil || !strings.Contains(err.Error(), `profile "none": pluginConfig OnDemandShare: args are *config.PlacementPolicyArgs, want *config.OnDemandShareArgs`) {
		t.Errorf("FromConfig with args of another kind: %v", err)
	}
}
