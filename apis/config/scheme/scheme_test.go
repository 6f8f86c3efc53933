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

package scheme

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	schedconfigv1 "k8s.io/kubernetes/pkg/scheduler/apis/config/v1"

	"github.com/adminsched/scheduler-plugins/apis/config"
	configv1 "github.com/adminsched/scheduler-plugins/apis/config/v1"
)

var (
	internalKind = config.SchemeGroupVersion.WithKind("NodeLessPodsArgs")
	v1Kind       = configv1.SchemeGroupVersion.WithKind("NodeLessPodsArgs")
)

// TestSchemesKnowArgs checks every scheme the scheduler uses for plugin args:
// the global one that decodes config files, the lazily built one that
// defaults and converts pluginConfig args, and a scheme built with AddToScheme.
func TestSchemesKnowArgs(t *testing.T) {
	own := runtime.NewScheme()
	AddToScheme(own)
	tests := []struct {
		name   string
		scheme *runtime.Scheme
	}{
		{name: "Scheme is the scheduler's global scheme", scheme: Scheme},
		{name: "scheduler's global scheme", scheme: schedscheme.Scheme},
		{name: "scheduler's plugin-args conversion scheme", scheme: schedconfigv1.GetPluginArgConversionScheme()},
		{name: "AddToScheme", scheme: own},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, tt := range []struct {
				gvk  schema.GroupVersionKind
				want runtime.Object
			}{
				{gvk: internalKind, want: &config.NodeLessPodsArgs{}},
				{gvk: v1Kind, want: &configv1.NodeLessPodsArgs{}},
				{gvk: config.SchemeGroupVersion.WithKind("PlacementPolicyArgs"), want: &config.PlacementPolicyArgs{}},
				{gvk: configv1.SchemeGroupVersion.WithKind("PlacementPolicyArgs"), want: &configv1.PlacementPolicyArgs{}},
				{gvk: config.SchemeGroupVersion.WithKind("MaintenanceWindowArgs"), want: &config.MaintenanceWindowArgs{}},
				{gvk: configv1.SchemeGroupVersion.WithKind("MaintenanceWindowArgs"), want: &configv1.MaintenanceWindowArgs{}},
			} {
				got, err := tc.scheme.New(tt.gvk)
				if err != nil {
					t.Errorf("New(%v): %v", tt.gvk, err)
					continue
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("New(%v) (-want, +got):\n%s", tt.gvk, diff)
				}
			}
		})
	}
	if Scheme != schedscheme.Scheme {
		t.Errorf("Scheme is not the scheduler's global scheme")
	}
}

// TestDecodeConfigFile decodes a KubeSchedulerConfiguration with the codecs of
// the scheduler's global scheme, as kube-scheduler --config does.
func TestDecodeConfigFile(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		plugin  string
		want    runtime.Object
		wantErr string
	}{
		{
			name: "set args are kept and the rest defaulted",
			yaml: `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: custom-scheduler
  pluginConfig:
  - name: NodeLessPods
    args:
      mode: MostPods
      namespaces: [a]
`,
			plugin: "NodeLessPods",
			want: &config.NodeLessPodsArgs{
				Mode:                config.NodeLessPodsMostPods,
				Namespaces:          []string{"a"},
				IgnoreDaemonSetPods: true,
			},
		},
		{
			name: "placement rules are decoded and defaulted",
			yaml: `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: custom-scheduler
  pluginConfig:
  - name: PlacementPolicy
    args:
      excludedNamespaces: [kube-system]
      rules:
      - name: eu-data-residency
        namespaces: [payments]
        nodeSelector:
          matchExpressions:
          - {key: topology.kubernetes.io/region, operator: In, values: [eu-west-1]}
        action: Require
      - name: batch-prefers-spot
        podSelector: {matchLabels: {workload: batch}}
        nodeSelector: {matchLabels: {karpenter.sh/capacity-type: spot}}
        action: Prefer
`,
			plugin: "PlacementPolicy",
			want: &config.PlacementPolicyArgs{
				Rules: []config.PlacementRule{
					{
						Name:       "eu-data-residency",
						Namespaces: []string{"payments"},
						NodeSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
							{Key: "topology.kubernetes.io/region", Operator: metav1.LabelSelectorOpIn, Values: []string{"eu-west-1"}},
						}},
						Action: config.PlacementRequire,
					},
					{
						Name:         "batch-prefers-spot",
						PodSelector:  &metav1.LabelSelector{MatchLabels: map[string]string{"workload": "batch"}},
						NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"karpenter.sh/capacity-type": "spot"}},
						Action:       config.PlacementPrefer,
						Weight:       1,
					},
				},
				IgnoreDaemonSetPods: true,
				ExcludedNamespaces:  []string{"kube-system"},
			},
		},
		{
			name: "maintenance window durations are decoded",
			yaml: `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: custom-scheduler
  pluginConfig:
  - name: MaintenanceWindow
    args:
      avoidWithin: 30m
      exemptPodSelector: {matchLabels: {app: kured}}
`,
			plugin: "MaintenanceWindow",
			want: &config.MaintenanceWindowArgs{
				AnnotationKey:          "scheduling.adminsched.io/maintenance-window",
				AvoidWithin:            metav1.Duration{Duration: 30 * time.Minute},
				Horizon:                metav1.Duration{Duration: 24 * time.Hour},
				IgnoreDaemonSetPods:    true,
				ExemptPodSelector:      &metav1.LabelSelector{MatchLabels: map[string]string{"app": "kured"}},
				RuntimeAware:           true,
				RuntimeMargin:          metav1.Duration{Duration: 10 * time.Minute},
				ProviderSignals:        true,
				ProviderWindowDuration: metav1.Duration{Duration: time.Hour},
				NodeConditions:         true,
				PlannedWithoutTime:     config.PlannedAvoid,
				Karpenter:              true,
			},
		},
		{
			name: "on-demand share policies are decoded and defaulted",
			yaml: `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: custom-scheduler
  pluginConfig:
  - name: OnDemandShare
    args:
      excludedNamespaces: [kube-system]
      policies:
      - name: web
        namespaceSelector: {matchLabels: {tier: web}}
        minOnDemandPercent: 30
      - name: aks
        namespaces: [batch]
        minOnDemandCount: 2
        capacity: {preset: AKS}
        spotWaitTimeout: 0s
        recovery: {maxPodsPerInterval: 3}
`,
			plugin: "OnDemandShare",
			want: &config.OnDemandShareArgs{
				ExcludedNamespaces: []string{"kube-system"},
				Policies: []config.OnDemandSharePolicy{
					{
						Name:               "web",
						NamespaceSelector:  &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "web"}},
						WorkloadKinds:      []config.WorkloadKind{config.WorkloadDeployment, config.WorkloadStatefulSet, config.WorkloadJob},
						MinOnDemandPercent: 30,
						Capacity:           config.CapacityClasses{Preset: config.CapacityKarpenter},
						SpotWaitTimeout:    metav1.Duration{Duration: 5 * time.Minute},
						Recovery:           config.SpotRecovery{Interval: metav1.Duration{Duration: 10 * time.Minute}, MaxPodsPerInterval: 1},
					},
					{
						Name:             "aks",
						Namespaces:       []string{"batch"},
						WorkloadKinds:    []config.WorkloadKind{config.WorkloadDeployment, config.WorkloadStatefulSet, config.WorkloadJob},
						MinOnDemandCount: 2,
						Capacity:         config.CapacityClasses{Preset: config.CapacityAKS},
						Recovery:         config.SpotRecovery{Interval: metav1.Duration{Duration: 10 * time.Minute}, MaxPodsPerInterval: 3},
					},
				},
			},
		},
		{
			name: "unknown field in an on-demand share policy",
			yaml: `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: custom-scheduler
  pluginConfig:
  - name: OnDemandShare
    args:
      policies:
      - name: web
        namespaces: [shop]
        minOnDemand: 30
`,
			wantErr: `strict decoding error: decoding .profiles[0].pluginConfig[0]: strict decoding error: decoding args for plugin OnDemandShare: strict decoding error: unknown field "policies[0].minOnDemand"`,
		},
		{
			// metav1.Duration's decoder reports the value, not the field:
			// the plugin and the value are what the message names.
			name: "a malformed duration names the plugin and the value",
			yaml: `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: custom-scheduler
  pluginConfig:
  - name: MaintenanceWindow
    args:
      horizon: one day
`,
			wantErr: `decoding .profiles[0].pluginConfig[0]: decoding args for plugin MaintenanceWindow: time: invalid duration "one day"`,
		},
		{
			name: "unknown field in a placement rule",
			yaml: `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: custom-scheduler
  pluginConfig:
  - name: PlacementPolicy
    args:
      rules:
      - name: r
        namespaces: [a]
        nodeSelector: {}
        action: Require
        nodeSelectorTerms: []
`,
			wantErr: `strict decoding error: decoding .profiles[0].pluginConfig[0]: strict decoding error: decoding args for plugin PlacementPolicy: strict decoding error: unknown field "rules[0].nodeSelectorTerms"`,
		},
		{
			name: "unknown field",
			yaml: `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: custom-scheduler
  pluginConfig:
  - name: NodeLessPods
    args:
      bogus: true
`,
			wantErr: `strict decoding error: decoding .profiles[0].pluginConfig[0]: strict decoding error: decoding args for plugin NodeLessPods: strict decoding error: unknown field "bogus"`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj, _, err := schedscheme.Codecs.UniversalDecoder().Decode([]byte(tc.yaml), nil, nil)
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("Decode: got no error, want %q", tc.wantErr)
				}
				if diff := cmp.Diff(tc.wantErr, err.Error()); diff != "" {
					t.Errorf("Decode error (-want, +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			cfg, ok := obj.(*schedconfig.KubeSchedulerConfiguration)
			if !ok {
				t.Fatalf("Decode returned %T, want *KubeSchedulerConfiguration", obj)
			}
			var got runtime.Object
			for _, pc := range cfg.Profiles[0].PluginConfig {
				if pc.Name == tc.plugin {
					got = pc.Args
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s args (-want, +got):\n%s", tc.plugin, diff)
			}
		})
	}
}
