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
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

// TestExampleConfig loads manifests/ondemandshare/scheduler-config.yaml the
// way kube-scheduler --config does and checks what its comments say: a pod
// of a labelled namespace is held to on-demand nodes while its workload is
// below 30%, a single replica included, and a pod of an unlabelled
// namespace is left alone.
func TestExampleConfig(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	cfg, err := options.LoadConfigFromFile(logger, filepath.Join("..", "..", "manifests", "ondemandshare", "scheduler-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if le := cfg.LeaderElection; le.ResourceName != "custom-scheduler" || le.ResourceNamespace != "kube-system" {
		t.Errorf("lease %s/%s, want kube-system/custom-scheduler (not the default scheduler's)", le.ResourceNamespace, le.ResourceName)
	}
	var args *config.OnDemandShareArgs
	for _, pc := range cfg.Profiles[0].PluginConfig {
		if pc.Name == Name {
			args = pc.Args.(*config.OnDemandShareArgs)
		}
	}
	if args == nil || len(args.Policies) != 1 {
		t.Fatalf("the example's %s args: %+v, want one policy", Name, args)
	}
	// Deployment api (UID d-api) in a labelled namespace, three replicas,
	// none on-demand yet: ceil(30% of 3) = 1 is required.
	rs := replicaSet("api-1", "rs-api-1", controllerRef("apps/v1", "Deployment", "api", "d-api"))
	rs.Namespace = "labelled"
	apiPod := func(name string, opts ...podOpt) *v1.Pod {
		return webPod(name, append([]podOpt{inNamespace("labelled"), ownedBy(controllerRef("apps/v1", "ReplicaSet", rs.Name, rs.UID))}, opts...)...)
	}
	world := func(pods ...*v1.Pod) world {
		w := defaultWorld(pods...)
		w.namespaces = append(w.namespaces, namespace("labelled", "ondemandshare.adminsched.io/min-percent", "30"))
		w.rss = append(w.rss, rs)
		return w
	}
	held := apiPod("a")
	if got := strings.Join(newTestFramework(t, args, world(held, apiPod("b"), apiPod("c"))).cycle(held).feasible, ","); got != "od-1,od-2" {
		t.Errorf("a pod of a labelled namespace, its workload 0/1 on-demand: feasible %s, want od-1,od-2", got)
	}
	// One replica on-demand meets the minimum: spot is preferred.
	if r := newTestFramework(t, args, world(held, apiPod("b", on("od-1")), apiPod("c"))).cycle(held); r.skipScore || r.scores["spot-1"] <= r.scores["od-2"] {
		t.Errorf("a pod whose workload holds its minimum: scores %v, want spot preferred", r.scores)
	}
	// A single replica at 30% goes on-demand.
	if got := strings.Join(newTestFramework(t, args, world(held)).cycle(held).feasible, ","); got != "od-1,od-2" {
		t.Errorf("a single replica: feasible %s, want od-1,od-2", got)
	}
	other := webPod("other", inNamespace("shop"))
	if r := newTestFramework(t, args, defaultWorld(other)).cycle(other); !r.skipFilter || !r.skipScore {
		t.Errorf("a pod of an unlabelled namespace: not skipped (filter %v, score %v)", r.skipFilter, r.skipScore)
	}
}
