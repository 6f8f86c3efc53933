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
	"strings"
	"testing"
)

// TestPlacement runs examples/scenarios/placement.yaml with its
// PlacementPolicy config, as its header shows: the ledger of payments stays
// in eu-west-1, batch pods land on spot, the critical API never does.
func TestPlacement(t *testing.T) {
	config := scenarios + "placement-config.yaml"
	code, out, _ := runPlayground(t, "--config", config, "--scenario", scenarios+"placement.yaml", "--output", "json")
	if code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
	r := decodeResult(t, out)
	if len(r.Pods) != 16 {
		t.Fatalf("%d pods, want 16", len(r.Pods))
	}
	for _, p := range r.Pods {
		if p.Node == "" {
			t.Errorf("pod %s/%s not scheduled: %s", p.Namespace, p.Name, p.Reason)
			continue
		}
		spot := strings.HasPrefix(p.Node, "spot-")
		switch p.Namespace {
		case "payments":
			if strings.HasPrefix(p.Node, "us-") {
				t.Errorf("ledger pod %s landed on %s, outside eu-west-1", p.Name, p.Node)
			}
		case "analytics":
			if !spot {
				t.Errorf("batch pod %s landed on %s, want a spot node", p.Name, p.Node)
			}
		case "web":
			if spot {
				t.Errorf("critical pod %s landed on spot node %s", p.Name, p.Node)
			}
		}
	}
}
