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

package ondemandshare

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/klog/v2/ktesting"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

// TestReadmeArgs loads the args example of README.md the way kube-scheduler
// --config does (strict decoding, v1 defaults) and builds the plugin on it.
func TestReadmeArgs(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "## Args")
	if !ok {
		t.Fatal("README.md has no Args section")
	}
	_, rest, _ = strings.Cut(rest, "```yaml\n")
	example, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("README.md's Args section has no yaml block")
	}
	cfg := "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: default-scheduler\n" +
		indent(example, "  ")
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	logger, _ := ktesting.NewTestContext(t)
	loaded, err := options.LoadConfigFromFile(logger, file)
	if err != nil {
		t.Fatalf("loading the README's args: %v", err)
	}
	var args *config.OnDemandShareArgs
	for _, pc := range loaded.Profiles[0].PluginConfig {
		if pc.Name == Name {
			args = pc.Args.(*config.OnDemandShareArgs)
		}
	}
	if args == nil || len(args.Policies) != 1 || args.Policies[0].MinOnDemandPercent != 30 {
		t.Fatalf("the README's args decode to %+v; want one policy at 30%%", args)
	}
	newTestFramework(t, args, defaultWorld())
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n") + "\n"
}
