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

import "github.com/adminsched/scheduler-plugins/internal/filelimit"

// MaxScenarioBytes caps a scenario file and its base. The largest scenario
// the other limits allow, a snapshot of MaxNodes nodes with 17 labels each
// (as on a cloud provider's nodes) and MaxBoundPods pods with 4 labels, an
// owner and 3 containers each, is 69 MiB (a 5,000-node 50,000-pod one
// 34 MiB).
const MaxScenarioBytes = 128 << 20

func readScenarioFile(path string) ([]byte, error) {
	return filelimit.Read(path, MaxScenarioBytes, "scenario file")
}
