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
	"fmt"
	"reflect"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// Sniffed is what a file looks like, for the error on a file given where
// another kind was wanted: a scenario as --config, a scheduler config as
// --scenario.
type Sniffed struct {
	// Kind is the file's kind: field, if it has one.
	Kind string
	// ScenarioFields are the top-level fields of a scenario it has, in the
	// order of the Scenario type's.
	ScenarioFields []string
}

// Sniff decodes the first document of data loosely and says what it looks
// like; false when it is no YAML or JSON map, which the loader at hand
// explains better.
func Sniff(data []byte) (Sniffed, bool) {
	var doc map[string]interface{}
	if err := yaml.Unmarshal(data, &doc); err != nil || doc == nil {
		return Sniffed{}, false
	}
	var s Sniffed
	s.Kind, _ = doc["kind"].(string)
	for _, name := range jsonFields(reflect.TypeOf(Scenario{})) {
		if _, ok := doc[name]; ok {
			s.ScenarioFields = append(s.ScenarioFields, name)
		}
	}
	return s, true
}

// IsScenario says that the file has a scenario's fields and no kind.
func (s Sniffed) IsScenario() bool {
	return s.Kind == "" && len(s.ScenarioFields) > 0
}

// Has lists the scenario fields, as "nodes: and objects:".
func (s Sniffed) Has() string {
	fields := slices.Clone(s.ScenarioFields)
	for i := range fields {
		fields[i] += ":"
	}
	if len(fields) <= 2 {
		return strings.Join(fields, " and ")
	}
	return strings.Join(fields[:len(fields)-1], ", ") + " and " + fields[len(fields)-1]
}

// notAScenario explains a file that failed to decode as a scenario because
// it is a Kubernetes object, which a scenario never is (it has no kind):
// the file in full would say less than its kind does. nil when data has no
// kind.
func notAScenario(file string, data []byte) error {
	s, _ := Sniff(data)
	switch kind := s.Kind; kind {
	case "":
		return nil
	case "KubeSchedulerConfiguration":
		return fmt.Errorf("%s is a KubeSchedulerConfiguration (it has kind: %s), not a scenario; pass it as --config", file, kind)
	default:
		return fmt.Errorf("%s is a %s (it has kind: %s), not a scenario; a scenario lists Kubernetes objects under objects:", file, kind, kind)
	}
}
