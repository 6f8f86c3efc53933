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

package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/adminsched/scheduler-plugins/internal/testconfig"
)

// TestBinaryWarnsUnusedPluginConfig starts bin/kube-scheduler with args
// under a misspelt plugin name, which kube-scheduler accepts and drops: the
// binary logs a warning naming the profile, the entry and the plugin meant
// before it starts scheduling, and keeps running. The wording and the cases
// are cmd/scheduler's TestUnusedPluginConfigWarning.
func TestBinaryWarnsUnusedPluginConfig(t *testing.T) {
	tc := newTestContext(t)
	cfg := nodeLessPodsConfig(nil)
	cfg.Profiles[0].PluginConfig = append(cfg.Profiles[0].PluginConfig, testconfig.RawArgs("NodeLessPod", `{"mode": "MostPods"}`))
	args, _ := tc.servingArgs()
	p := tc.runBinary("unused-pluginconfig-scheduler", append(args, "--config="+testconfig.Write(t, cfg))...)

	const started = "Starting Kubernetes Scheduler"
	deadline := time.Now().Add(waitTimeout)
	for !strings.Contains(p.Output(), started) {
		if p.Exited() || time.Now().After(deadline) {
			t.Fatalf("the scheduler did not start (exited: %v); output:\n%s", p.Exited(), p.Output())
		}
		time.Sleep(100 * time.Millisecond)
	}
	out := p.Output()
	want := `"Warning: pluginConfig entry ignored, its args reach no plugin" profile="` + schedulerName +
		`" pluginConfig="profiles[0].pluginConfig[0]" name="NodeLessPod" reason="no such plugin" didYouMean="NodeLessPods"`
	at := strings.Index(out, want)
	if at < 0 {
		t.Fatalf("the scheduler's output has no line with\n%s\noutput:\n%s", want, out)
	}
	if at > strings.Index(out, started) {
		t.Errorf("the warning comes after %q; want it before the scheduler runs", started)
	}
	if strings.Count(out, "pluginConfig entry ignored") != 1 {
		t.Errorf("want one warning, for the one misspelt entry; output:\n%s", out)
	}
}
