//go:build !kube1.36 && !kube1.35

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

package upstream

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/kubernetes/pkg/scheduler"
	perf "k8s.io/kubernetes/test/integration/scheduler_perf"
	"k8s.io/kubernetes/test/utils/client-go/ktesting"
	sigsyaml "sigs.k8s.io/yaml"

	apisv1 "github.com/adminsched/scheduler-plugins/apis/config/v1"
	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow"
	"github.com/adminsched/scheduler-plugins/pkg/nodelesspods"
	"github.com/adminsched/scheduler-plugins/pkg/nodepoolquota"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare"
	"github.com/adminsched/scheduler-plugins/pkg/placementpolicy"
	"github.com/adminsched/scheduler-plugins/pkg/plugins"
)

// profile is what a run adds to every scheduler profile of every test
// case.
type profile struct {
	name string
	// edit changes one scheduler profile; nil leaves it as upstream wrote it.
	edit func(*configv1.KubeSchedulerProfile)
	// options are harness options the profile needs.
	options []perf.SchedulerPerfOption
}

// profiles are the runs -upstream-profiles chooses from. "all" is what a
// platform team would add to its profile with nothing configured yet:
// NodeLessPods with its default args (LeastPods) at weight 1, PlacementPolicy
// without rules, MaintenanceWindow with its default args and no node
// carrying a window, OnDemandShare without policies (it then skips every
// pod, reading nothing), NodePoolQuota without quotas (it skips every pod).
var profiles = []profile{
	{name: "default"},
	{name: "all", edit: enable(
		plugin(nodelesspods.Name, 1),
		plugin(placementpolicy.Name, 0),
		plugin(maintenancewindow.Name, 0),
		plugin(ondemandshare.Name, 0),
		plugin(nodepoolquota.Name, 0),
	)},
	{name: "NodeLessPods", edit: enable(plugin(nodelesspods.Name, 1))},
	{name: "PlacementPolicy", edit: enable(plugin(placementpolicy.Name, 0))},
	{name: "MaintenanceWindow", edit: enable(plugin(maintenancewindow.Name, 0))},
	{name: "OnDemandShare", edit: enable(plugin(ondemandshare.Name, 0))},
	{name: "NodePoolQuota", edit: enable(plugin(nodepoolquota.Name, 0))},
	// The cost once the plugin has work: a window on 1% of the nodes.
	{name: "MaintenanceWindowOn1pct", edit: enable(plugin(maintenancewindow.Name, 0)),
		options: []perf.SchedulerPerfOption{perf.WithNodeUpdateFn(windowsOn(100))}},
}

// selectProfiles returns the profiles a comma-separated list names, in
// the list's order.
func selectProfiles(list string) ([]profile, error) {
	var selected []profile
	for _, name := range strings.Split(list, ",") {
		found := false
		for _, p := range profiles {
			if p.name == strings.TrimSpace(name) {
				selected = append(selected, p)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("-upstream-profiles: unknown profile %q, want a comma-separated list of %s", name, names(profiles))
		}
	}
	return selected, nil
}

// windowsOn returns a node update that gives one node in every n a
// maintenance window within MaintenanceWindow's default horizon (opening
// in an hour, for two hours) and waits until the scheduler's cache has
// them all.
func windowsOn(n int) perf.NodeUpdateFn {
	return func(tCtx ktesting.TContext, sched *scheduler.Scheduler, _ *perf.Workload, nodes *v1.NodeList) error {
		start := time.Now().Add(time.Hour).UTC()
		window := start.Format(time.RFC3339) + "/" + start.Add(2*time.Hour).Format(time.RFC3339)
		patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, apisv1.DefaultMaintenanceWindowAnnotation, window)
		var annotated []string
		for i, node := range nodes.Items {
			if i%n != 0 {
				continue
			}
			if _, err := tCtx.Client().CoreV1().Nodes().Patch(tCtx, node.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				return fmt.Errorf("annotating node %s with a window: %w", node.Name, err)
			}
			annotated = append(annotated, node.Name)
		}
		tCtx.Logf("Gave %d of %d nodes the maintenance window %s", len(annotated), len(nodes.Items), window)
		return wait.PollUntilContextTimeout(tCtx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			for _, name := range annotated {
				info, err := sched.Cache.GetNode(name)
				if err != nil || info.Node().Annotations[apisv1.DefaultMaintenanceWindowAnnotation] != window {
					return false, nil
				}
			}
			return true, nil
		})
	}
}

// TestProfilesCoverPlugins checks that "all" enables every plugin of the
// registry and that each has a profile of its own, so that a new plugin
// runs through upstream's suites in make test.
func TestProfilesCoverPlugins(t *testing.T) {
	enabledIn := func(p profile) map[string]bool {
		out, err := editConfig([]byte(defaultConfig), p.edit)
		if err != nil {
			t.Fatal(err)
		}
		var cfg configv1.KubeSchedulerConfiguration
		if err := sigsyaml.UnmarshalStrict(out, &cfg); err != nil {
			t.Fatal(err)
		}
		enabled := map[string]bool{}
		for _, pl := range cfg.Profiles[0].Plugins.MultiPoint.Enabled {
			enabled[pl.Name] = true
		}
		return enabled
	}
	all, err := selectProfiles("all")
	if err != nil {
		t.Fatal(err)
	}
	inAll := enabledIn(all[0])
	for _, name := range plugins.Names() {
		if !inAll[name] {
			t.Errorf("profile all does not enable %s", name)
		}
		alone, err := selectProfiles(name)
		if err != nil {
			t.Errorf("%s has no profile of its own: %v", name, err)
			continue
		}
		if got := enabledIn(alone[0]); len(got) != 1 || !got[name] {
			t.Errorf("profile %s enables %v, want %s alone", name, got, name)
		}
	}
}
