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
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/apis/config"
	v1config "github.com/adminsched/scheduler-plugins/apis/config/v1"
	"github.com/adminsched/scheduler-plugins/internal/schedulertest"
	"github.com/adminsched/scheduler-plugins/internal/testconfig"
	"github.com/adminsched/scheduler-plugins/pkg/nodelesspods"
	"github.com/adminsched/scheduler-plugins/pkg/placementpolicy"
)

// customProfile is the custom-scheduler profile that enables NodeLessPods
// at multiPoint (at weight, when weight > 0), then extra, with pluginConfig.
func customProfile(weight int32, extra []string, pluginConfig ...configv1.PluginConfig) configv1.KubeSchedulerProfile {
	multiPoint := testconfig.Plugins(weight, nodelesspods.Name)
	multiPoint.Enabled = append(multiPoint.Enabled, testconfig.Plugins(0, extra...).Enabled...)
	return configv1.KubeSchedulerProfile{
		SchedulerName: ptr.To("custom-scheduler"),
		Plugins:       &configv1.Plugins{MultiPoint: multiPoint},
		PluginConfig:  pluginConfig,
	}
}

// nodeLessPodsArgs is customProfile with args for NodeLessPods.
func nodeLessPodsArgs(args *v1config.NodeLessPodsArgs) configv1.KubeSchedulerProfile {
	return customProfile(0, nil, testconfig.Args(nodelesspods.Name, args))
}

// shippedConfig is the example configuration this repository ships.
const shippedConfig = "../../manifests/nodelesspods/scheduler-config.yaml"

// unreachableServer is where the test kubeconfig points. Nothing listens
// there: Setup builds clients and informers but never calls the API server.
const unreachableServer = "https://127.0.0.1:1"

// kubeconfigPlaceholder in a test config is replaced by the path of a
// kubeconfig that points to unreachableServer.
const kubeconfigPlaceholder = "KUBECONFIG_PATH"

const testKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: unreachable
  cluster:
    server: ` + unreachableServer + `
contexts:
- name: unreachable
  context:
    cluster: unreachable
    user: nobody
current-context: unreachable
users:
- name: nobody
  user: {}
`

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeConfigText writes a kubeconfig and the scheduler config text cfg,
// with kubeconfigPlaceholder replaced by the kubeconfig's path, to a fresh
// directory and returns the config's path. Only for text the v1 types cannot
// produce (malformed YAML, a removed API version); writeConfig otherwise.
func writeConfigText(t *testing.T, cfg string) string {
	t.Helper()
	dir := t.TempDir()
	kubeconfig := writeFile(t, dir, "kubeconfig", testKubeconfig)
	return writeFile(t, dir, "scheduler-config.yaml", strings.ReplaceAll(cfg, kubeconfigPlaceholder, kubeconfig))
}

// writeConfig writes a kubeconfig and a scheduler config that reaches the
// API server through it and holds profiles, and returns the config's path.
func writeConfig(t *testing.T, profiles ...configv1.KubeSchedulerProfile) string {
	t.Helper()
	kubeconfig := writeFile(t, t.TempDir(), "kubeconfig", testKubeconfig)
	return testconfig.Write(t, testconfig.New(kubeconfig, profiles...))
}

// newTestContext returns a context whose logger writes to t and keeps the
// entries, and a function that returns the entries logged so far.
func newTestContext(t *testing.T) (context.Context, func() ktesting.Log) {
	t.Helper()
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	t.Cleanup(cancel)
	return ctx, func() ktesting.Log {
		return logger.GetSink().(ktesting.Underlier).GetBuffer().Data()
	}
}

// setupScheduler loads configFile the way kube-scheduler --config does and
// builds the scheduler with registryOptions as the out-of-tree plugins.
// master, when set, plays the --master flag.
func setupScheduler(ctx context.Context, configFile, master string, registryOptions ...app.Option) (*scheduler.Scheduler, error) {
	opts := options.NewOptions()
	opts.ConfigFile = configFile
	opts.Master = master
	// Port 0 disables the secure serving endpoint: no listener on the
	// default port 10259, no self-signed certificate, and no delegated
	// authentication and authorization, which would look up the
	// extension-apiserver-authentication ConfigMap on the server.
	opts.SecureServing.BindPort = 0
	_, sched, err := app.Setup(ctx, opts, registryOptions...)
	return sched, err
}

// argsRecorder wraps nodelesspods.New to record the args every profile's
// framework hands to the plugin.
type argsRecorder struct {
	mu   sync.Mutex
	args []runtime.Object
}

func (r *argsRecorder) factory(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	r.mu.Lock()
	r.args = append(r.args, obj)
	r.mu.Unlock()
	return nodelesspods.New(ctx, obj, h)
}

func (r *argsRecorder) recorded() []runtime.Object {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]runtime.Object(nil), r.args...)
}

func TestSetupPassesArgsToPlugin(t *testing.T) {
	selector := &metav1.LabelSelector{
		MatchLabels: map[string]string{"app": "web"},
		MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "track", Operator: metav1.LabelSelectorOpIn, Values: []string{"stable", "canary"}},
			{Key: "example.com/batch", Operator: metav1.LabelSelectorOpDoesNotExist},
		},
	}
	tests := []struct {
		name    string
		profile configv1.KubeSchedulerProfile
		want    *config.NodeLessPodsArgs
	}{
		{
			name: "fully set args",
			profile: nodeLessPodsArgs(&v1config.NodeLessPodsArgs{
				Mode:                v1config.NodeLessPodsMostPods,
				PodSelector:         selector,
				Namespaces:          []string{"team-a", "team-b"},
				IgnoreDaemonSetPods: ptr.To(false),
				RelativeToCapacity:  ptr.To(true),
			}),
			want: &config.NodeLessPodsArgs{
				Mode:                config.NodeLessPodsMostPods,
				PodSelector:         selector,
				Namespaces:          []string{"team-a", "team-b"},
				IgnoreDaemonSetPods: false,
				RelativeToCapacity:  true,
			},
		},
		{
			name:    "no pluginConfig entry gives the defaults",
			profile: customProfile(0, nil),
			want: &config.NodeLessPodsArgs{
				Mode:                config.NodeLessPodsLeastPods,
				IgnoreDaemonSetPods: true,
				RelativeToCapacity:  false,
			},
		},
		{
			name: "empty args give the defaults",
			profile: configv1.KubeSchedulerProfile{
				SchedulerName: ptr.To("custom-scheduler"),
				Plugins:       &configv1.Plugins{Score: testconfig.Plugins(2, nodelesspods.Name)},
				PluginConfig:  []configv1.PluginConfig{testconfig.Args(nodelesspods.Name, &v1config.NodeLessPodsArgs{})},
			},
			want: &config.NodeLessPodsArgs{
				Mode:                config.NodeLessPodsLeastPods,
				IgnoreDaemonSetPods: true,
				RelativeToCapacity:  false,
			},
		},
		{
			name: "partly set args keep their values and default the rest",
			profile: nodeLessPodsArgs(&v1config.NodeLessPodsArgs{
				IgnoreDaemonSetPods: ptr.To(false),
				Namespaces:          []string{"team-a"},
			}),
			want: &config.NodeLessPodsArgs{
				Mode:                config.NodeLessPodsLeastPods,
				Namespaces:          []string{"team-a"},
				IgnoreDaemonSetPods: false,
				RelativeToCapacity:  false,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var rec argsRecorder
			ctx, _ := newTestContext(t)
			sched, err := setupScheduler(ctx, writeConfig(t, tc.profile), "", app.WithPlugin(nodelesspods.Name, rec.factory))
			if err != nil {
				t.Fatalf("Setup: %v", err)
			}
			if _, ok := sched.Profiles["custom-scheduler"]; !ok {
				t.Errorf("Setup built profiles %v, want custom-scheduler", profileNames(sched))
			}
			got := rec.recorded()
			if len(got) != 1 {
				t.Fatalf("NodeLessPods' New was called %d times, want once", len(got))
			}
			args, ok := got[0].(*config.NodeLessPodsArgs)
			if !ok {
				t.Fatalf("New got args of type %T, want *config.NodeLessPodsArgs", got[0])
			}
			if diff := cmp.Diff(tc.want, args); diff != "" {
				t.Errorf("args passed to New (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestSetupRejectsBadConfig: app.Setup, as the binary calls it, stops on a
// config that does not decode and on args the plugin's New refuses, one case
// per path. Which args are invalid, and the messages, are unit tests of
// apis/config/validation and apis/config/scheme; test/integration's
// TestBinaryRefusesBadConfig runs the binary itself.
func TestSetupRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name string
		// cfg writes the config and returns its path.
		cfg func(t *testing.T) string
		// wantErr lists strings the error must contain.
		wantErr []string
		// wantNewCalled tells whether the error comes from the plugin's New
		// (validation) rather than from decoding the file.
		wantNewCalled bool
	}{
		{
			name: "unknown field in args",
			cfg: func(t *testing.T) string {
				return writeConfig(t, customProfile(0, nil, testconfig.RawArgs(nodelesspods.Name, `{"mode": "LeastPods", "bogus": 1}`)))
			},
			wantErr: []string{`decoding .profiles[0].pluginConfig[0]`, `decoding args for plugin NodeLessPods`, `unknown field "bogus"`},
		},
		{
			name: "wrong type in args",
			cfg: func(t *testing.T) string {
				return writeConfig(t, customProfile(0, nil, testconfig.RawArgs(nodelesspods.Name, `{"relativeToCapacity": "yes"}`)))
			},
			wantErr: []string{"decoding args for plugin NodeLessPods", "NodeLessPodsArgs.relativeToCapacity of type bool"},
		},
		{
			name: "invalid mode",
			cfg: func(t *testing.T) string {
				return writeConfig(t, nodeLessPodsArgs(&v1config.NodeLessPodsArgs{Mode: "Fewest"}))
			},
			wantErr:       []string{`initializing plugin "NodeLessPods"`, `invalid NodeLessPods args: mode: Unsupported value: "Fewest": supported values: "LeastPods", "MostPods"`},
			wantNewCalled: true,
		},
		{
			name: "malformed YAML",
			cfg: func(t *testing.T) string {
				return writeConfigText(t, `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: KUBECONFIG_PATH
profiles:
- schedulerName: custom-scheduler
  pluginConfig:
  - name: NodeLessPods
    args:
      mode: [LeastPods
`)
			},
			wantErr: []string{"yaml: line 10:"},
		},
		{
			name: "removed v1beta3 API version",
			// A valid v1 config, in the API version removed in 1.29.
			cfg: func(t *testing.T) string {
				data, err := testconfig.Marshal(testconfig.New(kubeconfigPlaceholder, customProfile(0, nil)))
				if err != nil {
					t.Fatal(err)
				}
				return writeConfigText(t, strings.Replace(string(data), "apiVersion: kubescheduler.config.k8s.io/v1\n", "apiVersion: kubescheduler.config.k8s.io/v1beta3\n", 1))
			},
			wantErr: []string{`no kind "KubeSchedulerConfiguration" is registered for version "kubescheduler.config.k8s.io/v1beta3"`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var rec argsRecorder
			ctx, _ := newTestContext(t)
			sched, err := setupScheduler(ctx, tc.cfg(t), "", app.WithPlugin(nodelesspods.Name, rec.factory))
			if err == nil {
				t.Fatalf("Setup succeeded with profiles %v, want an error containing %q", profileNames(sched), tc.wantErr)
			}
			t.Logf("Setup error: %v", err)
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Setup error does not contain %q:\n%v", want, err)
				}
			}
			if called := len(rec.recorded()) > 0; called != tc.wantNewCalled {
				t.Errorf("NodeLessPods' New called: %v, want %v (error: %v)", called, tc.wantNewCalled, err)
			}
		})
	}
}

// nodeLessPodsExtensionPoints returns, by extension point, the entries that
// name NodeLessPods in plugins.
func nodeLessPodsExtensionPoints(plugins *schedconfig.Plugins) map[string]schedconfig.Plugin {
	got := map[string]schedconfig.Plugin{}
	v := reflect.ValueOf(plugins).Elem()
	for i := 0; i < v.NumField(); i++ {
		set, ok := v.Field(i).Interface().(schedconfig.PluginSet)
		if !ok {
			continue
		}
		for _, p := range set.Enabled {
			if p.Name == nodelesspods.Name {
				got[v.Type().Field(i).Name] = p
			}
		}
	}
	return got
}

func profileNames(sched *scheduler.Scheduler) []string {
	if sched == nil {
		return nil
	}
	var names []string
	for name := range sched.Profiles {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func TestShippedConfig(t *testing.T) {
	ctx, _ := newTestContext(t)
	// The shipped file sets no clientConnection.kubeconfig; --master tells
	// where the API server is.
	sched, err := setupScheduler(ctx, shippedConfig, unreachableServer, outOfTreePlugins()...)
	if err != nil {
		t.Fatalf("Setup with %s: %v", shippedConfig, err)
	}
	if diff := cmp.Diff([]string{"custom-scheduler"}, profileNames(sched)); diff != "" {
		t.Fatalf("profiles (-want, +got):\n%s", diff)
	}
	want := map[string]schedconfig.Plugin{
		"Score":   {Name: nodelesspods.Name, Weight: 3},
		"Reserve": {Name: nodelesspods.Name},
	}
	got := nodeLessPodsExtensionPoints(sched.Profiles["custom-scheduler"].ListPlugins())
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("NodeLessPods' extension points in custom-scheduler (-want, +got):\n%s", diff)
	}
}

// unsignedScore is a test-only score plugin that does not implement
// fwk.SignPlugin, so a profile that enables it loses pod signatures.
type unsignedScore struct{}

var _ fwk.ScorePlugin = unsignedScore{}

func (unsignedScore) Name() string { return "TestUnsignedScore" }

func (unsignedScore) Score(context.Context, fwk.CycleState, *v1.Pod, fwk.NodeInfo) (int64, *fwk.Status) {
	return 0, nil
}

func (unsignedScore) ScoreExtensions() fwk.ScoreExtensions { return nil }

// signedScore is unsignedScore with a SignPod: the control that shows adding a
// score plugin does not by itself turn signatures off.
type signedScore struct{ unsignedScore }

var _ fwk.SignPlugin = signedScore{}

func (signedScore) Name() string { return "TestSignedScore" }

func (signedScore) SignPod(context.Context, *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	return nil, nil
}

// noDefaultSpreading configures PodTopologySpread without default
// constraints: with the System defaulting of the default configuration it
// refuses to sign every pod, which hides what the other plugins do.
var noDefaultSpreading = testconfig.Args("PodTopologySpread", &configv1.PodTopologySpreadArgs{DefaultingType: configv1.ListDefaulting})

// signingProfile is the shipped profile (NodeLessPods at weight 3) without
// default spreading, for the signature tests.
func signingProfile() configv1.KubeSchedulerProfile {
	return customProfile(3, nil, noDefaultSpreading)
}

// withScorePlugin is signingProfile with the named test score plugin
// enabled at score.
func withScorePlugin(name string) configv1.KubeSchedulerProfile {
	p := signingProfile()
	p.Plugins.Score = testconfig.Plugins(1, name)
	return p
}

// signaturesDisabledBy returns the plugins named by the framework's
// "Disabling signatures for profile" message for profile, sorted, and whether
// there was such a message.
func signaturesDisabledBy(log ktesting.Log, profile string) ([]string, bool) {
	for _, e := range log {
		if !strings.HasPrefix(e.Message, "Disabling signatures for profile") {
			continue
		}
		kvs := kvMap(e.ParameterKVList)
		if kvs["profile"] != profile {
			continue
		}
		plugins, _ := kvs["plugins"].([]string)
		plugins = append([]string(nil), plugins...)
		sort.Strings(plugins)
		return plugins, true
	}
	return nil, false
}

// refusedToSign returns the plugins that the framework logged as unable to
// sign a pod.
func refusedToSign(log ktesting.Log) []string {
	var plugins []string
	for _, e := range log {
		if e.Message == "SignPod can't sign pod due to plugin" {
			if name, ok := kvMap(e.ParameterKVList)["plugin"].(string); ok {
				plugins = append(plugins, name)
			}
		}
	}
	return plugins
}

func kvMap(kvs []interface{}) map[string]interface{} {
	m := map[string]interface{}{}
	for i := 0; i+1 < len(kvs); i += 2 {
		if k, ok := kvs[i].(string); ok {
			m[k] = kvs[i+1]
		}
	}
	return m
}

func TestSignPod(t *testing.T) {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: "default", UID: "plain-uid"},
		Spec: v1.PodSpec{
			SchedulerName: "custom-scheduler",
			Containers: []v1.Container{{
				Name:  "app",
				Image: "app:1",
				Resources: v1.ResourceRequirements{
					Requests: v1.ResourceList{
						v1.ResourceCPU:    resource.MustParse("100m"),
						v1.ResourceMemory: resource.MustParse("64Mi"),
					},
				},
			}},
		},
	}
	testPlugins := []app.Option{
		app.WithPlugin(unsignedScore{}.Name(), func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
			return unsignedScore{}, nil
		}),
		app.WithPlugin(signedScore{}.Name(), func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
			return signedScore{}, nil
		}),
	}
	tests := []struct {
		name       string
		configFile func(t *testing.T) string
		master     string
		// wantDisabledBy lists the plugins for which the framework turns
		// signatures off for the whole profile; nil when it keeps them on.
		wantDisabledBy []string
		// wantRefusedBy lists the plugins whose SignPod refuses the pod.
		wantRefusedBy []string
		wantSignature bool
	}{
		{
			// NodeLessPods keeps the profile's signatures on, but with the
			// default PodTopologySpread args (System defaulting) Kubernetes
			// v1.37 signs no pod at all.
			name:          "shipped profile",
			configFile:    func(*testing.T) string { return shippedConfig },
			master:        unreachableServer,
			wantRefusedBy: []string{"PodTopologySpread"},
			wantSignature: false,
		},
		{
			name:          "shipped profile without default spreading signs a plain pod",
			configFile:    func(t *testing.T) string { return writeConfig(t, signingProfile()) },
			wantSignature: true,
		},
		{
			// The pod matches a Require rule: PlacementPolicy signs it with
			// the rule's name.
			name: "PlacementPolicy keeps signatures",
			configFile: func(t *testing.T) string {
				return writeConfig(t, customProfile(3, []string{placementpolicy.Name}, noDefaultSpreading,
					testconfig.Args(placementpolicy.Name, &v1config.PlacementPolicyArgs{Rules: []v1config.PlacementRule{{
						Name:         "default-namespace",
						Namespaces:   []string{"default"},
						NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"disk": "ssd"}},
						Action:       v1config.PlacementRequire,
					}}})))
			},
			wantSignature: true,
		},
		{
			name: "a score plugin with SignPod keeps signatures",
			configFile: func(t *testing.T) string {
				return writeConfig(t, withScorePlugin(signedScore{}.Name()))
			},
			wantSignature: true,
		},
		{
			name: "a score plugin without SignPod disables signatures",
			configFile: func(t *testing.T) string {
				return writeConfig(t, withScorePlugin(unsignedScore{}.Name()))
			},
			wantDisabledBy: []string{unsignedScore{}.Name()},
			wantSignature:  false,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, logs := newTestContext(t)
			opts := append(outOfTreePlugins(), testPlugins...)
			sched, err := setupScheduler(ctx, tc.configFile(t), tc.master, opts...)
			if err != nil {
				t.Fatalf("Setup: %v", err)
			}
			gotDisabledBy, _ := signaturesDisabledBy(logs(), "custom-scheduler")
			if diff := cmp.Diff(tc.wantDisabledBy, gotDisabledBy); diff != "" {
				t.Errorf("plugins that disable signatures (-want, +got):\n%s", diff)
			}
			prof, ok := sched.Profiles["custom-scheduler"]
			if !ok {
				t.Fatalf("Setup built profiles %v, want custom-scheduler", profileNames(sched))
			}
			before := len(logs())
			sig := schedulertest.SignPod(ctx, prof, pod)
			if gotSignature := sig != nil; gotSignature != tc.wantSignature {
				t.Errorf("SignPod returned %q; want a signature: %v", sig, tc.wantSignature)
			}
			if diff := cmp.Diff(tc.wantRefusedBy, refusedToSign(logs()[before:])); diff != "" {
				t.Errorf("plugins that refused to sign the pod (-want, +got):\n%s", diff)
			}
		})
	}
}
