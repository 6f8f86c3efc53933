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

package maintenancewindow

import (
	"path/filepath"
	"testing"
	"time"

	"k8s.io/klog/v2/ktesting"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

// TestExampleConfig loads manifests/maintenancewindow/scheduler-config.yaml
// the way kube-scheduler --config does and checks what its comments say.
func TestExampleConfig(t *testing.T) {
	logger, ctx := ktesting.NewTestContext(t)
	cfg, err := options.LoadConfigFromFile(logger, filepath.Join("..", "..", "manifests", "maintenancewindow", "scheduler-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var args *config.MaintenanceWindowArgs
	for _, pc := range cfg.Profiles[0].PluginConfig {
		if pc.Name == Name {
			args = pc.Args.(*config.MaintenanceWindowArgs)
		}
	}
	if args == nil {
		t.Fatalf("no %s args in the example", Name)
	}
	pl, _, _ := newPlugin(t, args)
	pod := st.MakePod().Name("p").Namespace("default").Obj()
	for _, tc := range []struct {
		window  string
		blocked bool
	}{
		{window: interval(0.4, 2), blocked: true},  // opens in 24 minutes
		{window: interval(0.6, 2), blocked: false}, // opens in 36 minutes
	} {
		if got := !pl.Filter(ctx, nil, pod, nodeInfo(node("n", tc.window))).IsSuccess(); got != tc.blocked {
			t.Errorf("window %s: blocked %v, want %v", tc.window, got, tc.blocked)
		}
	}
	kured := st.MakePod().Name("kured").Namespace("kube-system").Label("app.kubernetes.io/name", "kured").Obj()
	if !pl.Filter(ctx, nil, kured, nodeInfo(node("n", interval(-1, 1)))).IsSuccess() {
		t.Errorf("kured is not exempt")
	}
	if args.Horizon.Duration != 24*time.Hour {
		t.Errorf("horizon %v, want 24h", args.Horizon.Duration)
	}
}
