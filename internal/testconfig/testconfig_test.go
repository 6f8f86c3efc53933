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

package testconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	configv1 "k8s.io/kube-scheduler/config/v1"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/apis/config"
	_ "github.com/adminsched/scheduler-plugins/apis/config/scheme"
	v1 "github.com/adminsched/scheduler-plugins/apis/config/v1"
)

// decode reads a written config as kube-scheduler --config does: strict
// decoding, defaulting, conversion to the internal types.
func decode(t *testing.T, path string) (*schedconfig.KubeSchedulerConfiguration, error) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	obj, _, err := schedscheme.Codecs.UniversalDecoder().Decode(data, nil, nil)
	if err != nil {
		return nil, err
	}
	return obj.(*schedconfig.KubeSchedulerConfiguration), nil
}

func TestWriteDecodes(t *testing.T) {
	cfg := New("/tmp/kubeconfig", configv1.KubeSchedulerProfile{
		SchedulerName: ptr.To("custom-scheduler"),
		Plugins:       &configv1.Plugins{MultiPoint: Plugins(3, "NodeLessPods")},
		PluginConfig: []configv1.PluginConfig{
			Args("NodeLessPods", &v1.NodeLessPodsArgs{Mode: v1.NodeLessPodsMostPods, Namespaces: []string{"a"}}),
		},
	})
	got, err := decode(t, Write(t, cfg))
	if err != nil {
		t.Fatalf("decoding the written config: %v", err)
	}
	if got.ClientConnection.Kubeconfig != "/tmp/kubeconfig" || got.LeaderElection.LeaderElect {
		t.Errorf("kubeconfig %q, leaderElect %v; want /tmp/kubeconfig, false", got.ClientConnection.Kubeconfig, got.LeaderElection.LeaderElect)
	}
	// Zero values in the file are defaulted as if absent.
	if got.ClientConnection.QPS == 0 || got.LeaderElection.LeaseDuration.Duration == 0 {
		t.Errorf("qps %v, leaseDuration %v: want the defaults", got.ClientConnection.QPS, got.LeaderElection.LeaseDuration)
	}
	if len(got.Profiles) != 1 {
		t.Fatalf("%d profiles, want 1", len(got.Profiles))
	}
	p := got.Profiles[0]
	if diff := cmp.Diff([]schedconfig.Plugin{{Name: "NodeLessPods", Weight: 3}}, p.Plugins.MultiPoint.Enabled[len(p.Plugins.MultiPoint.Enabled)-1:]); diff != "" {
		t.Errorf("last multiPoint plugin (-want, +got):\n%s", diff)
	}
	var args *config.NodeLessPodsArgs
	for _, pc := range p.PluginConfig {
		if pc.Name == "NodeLessPods" {
			args, _ = pc.Args.(*config.NodeLessPodsArgs)
		}
	}
	want := &config.NodeLessPodsArgs{Mode: config.NodeLessPodsMostPods, Namespaces: []string{"a"}, IgnoreDaemonSetPods: true}
	if diff := cmp.Diff(want, args); diff != "" {
		t.Errorf("NodeLessPods args (-want, +got):\n%s", diff)
	}
}

func TestRawArgs(t *testing.T) {
	for _, tc := range []struct {
		name       string
		raw        string
		wantMarsh  string
		wantDecode string
	}{
		{name: "unknown field reaches the strict decoder", raw: `{"bogus":1}`, wantDecode: `unknown field "bogus"`},
		{name: "not JSON", raw: "mode: [", wantMarsh: "pluginConfig NodeLessPods: args are not JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := New("", configv1.KubeSchedulerProfile{PluginConfig: []configv1.PluginConfig{RawArgs("NodeLessPods", tc.raw)}})
			_, err := Marshal(cfg)
			if tc.wantMarsh != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantMarsh) {
					t.Fatalf("Marshal error %v, want one containing %q", err, tc.wantMarsh)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = decode(t, Write(t, cfg))
			if err == nil || !strings.Contains(err.Error(), tc.wantDecode) {
				t.Errorf("decode error %v, want one containing %q", err, tc.wantDecode)
			}
		})
	}
}

func TestUnmarshal(t *testing.T) {
	const shipped = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: custom-scheduler
    plugins:
      multiPoint:
        enabled:
          - name: NodeLessPods
            weight: 3
    pluginConfig:
      - name: NodeLessPods
        args:
          mode: MostPods
`
	for _, tc := range []struct {
		name    string
		data    string
		wantErr string
	}{
		{name: "shipped config", data: shipped},
		{name: "unknown field", data: shipped + "bogus: 1\n", wantErr: `unknown field "bogus"`},
		{name: "other version", data: strings.Replace(shipped, "/v1\n", "/v1beta3\n", 1), wantErr: `apiVersion "kubescheduler.config.k8s.io/v1beta3"`},
		{name: "no kind", data: strings.Replace(shipped, "kind: KubeSchedulerConfiguration\n", "", 1), wantErr: `kind ""`},
		{name: "not YAML", data: "profiles: [", wantErr: "yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Unmarshal([]byte(tc.data))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Unmarshal error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// Written back with a kubeconfig, it decodes as the original
			// would, args included.
			cfg.ClientConnection.Kubeconfig = "/tmp/kubeconfig"
			got, err := decode(t, Write(t, cfg))
			if err != nil {
				t.Fatalf("decoding the written config: %v", err)
			}
			path := filepath.Join(t.TempDir(), "original.yaml")
			if err := os.WriteFile(path, []byte(tc.data+"clientConnection:\n  kubeconfig: /tmp/kubeconfig\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			want, err := decode(t, path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("written back (-original, +got):\n%s", diff)
			}
		})
	}
}
