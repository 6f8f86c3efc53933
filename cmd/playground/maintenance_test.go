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

import "testing"

// TestMaintenance runs examples/scenarios/maintenance.yaml with the shipped
// MaintenanceWindow config, as its header shows: web avoids the node being
// drained and gets fewer pods on the node due soonest than on the nodes
// without a window; the exempt kured pod still runs on the drained node.
func TestMaintenance(t *testing.T) {
	code, out, _ := runPlayground(t, "--config", "../../manifests/maintenancewindow/scheduler-config.yaml",
		"--scenario", scenarios+"maintenance.yaml", "--output", "json")
	if code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
	r := decodeResult(t, out)
	perNode := map[string]int{}
	for _, p := range r.Pods {
		switch {
		case p.Node == "":
			t.Errorf("pod %s/%s not scheduled: %s", p.Namespace, p.Name, p.Reason)
		case p.Name == "kured":
			if p.Node != "draining" {
				t.Errorf("kured landed on %s, want draining (it is exempt)", p.Node)
			}
		default:
			perNode[p.Node]++
		}
	}
	if perNode["draining"] != 0 {
		t.Errorf("%d web pods on draining, whose window is open", perNode["draining"])
	}
	if perNode["soon"] >= perNode["steady-1"] || perNode["soon"] >= perNode["steady-2"] {
		t.Errorf("web pods per node %v: want fewer on soon (window in 2h) than on each steady node", perNode)
	}
	t.Logf("web pods per node: %v", perNode)
}
