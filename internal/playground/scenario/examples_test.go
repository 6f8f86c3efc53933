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

package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestShippedScenariosLoad: every scenario in examples/scenarios decodes
// and validates against the shipped configs' profile, so a format change
// cannot leave one behind (the end-to-end tests run only some of them).
func TestShippedScenariosLoad(t *testing.T) {
	files, err := filepath.Glob("../../../examples/scenarios/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	scenarios := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "kind: KubeSchedulerConfiguration") {
			continue // a config, loaded by the cmd/playground tests
		}
		if strings.Contains(string(data), "kind: DeschedulerPolicy") {
			continue // a descheduler policy, run by the cmd/playground tests
		}
		scenarios++
		if _, err := loadPlan(f, []string{"custom-scheduler"}); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
	}
	if scenarios < 8 {
		t.Errorf("found %d scenarios in examples/scenarios, want at least the 8 shipped", scenarios)
	}
}
