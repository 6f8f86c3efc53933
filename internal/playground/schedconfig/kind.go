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

package schedconfig

import (
	"fmt"

	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
)

// notAConfig explains a file without a kind before the scheduler's loader
// does: its error ("Object 'Kind' is missing in '...'") quotes the whole
// file, where a scenario given as --config is the usual cause. nil for a
// file with a kind, or no YAML map, which the loader explains.
func notAConfig(source string, data []byte) error {
	s, ok := scenario.Sniff(data)
	switch {
	case !ok || s.Kind != "":
		return nil
	case s.IsScenario():
		return fmt.Errorf("scheduler config %s is a scenario (it has %s), not a KubeSchedulerConfiguration; pass it as --scenario", source, s.Has())
	}
	return fmt.Errorf("scheduler config %s has no kind: a KubeSchedulerConfiguration starts with apiVersion: %s and kind: KubeSchedulerConfiguration", source, configv1.SchemeGroupVersion)
}
