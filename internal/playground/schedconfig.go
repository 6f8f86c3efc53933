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

package playground

import (
	"fmt"

	"sigs.k8s.io/yaml"
)

// RewriteSchedulerConfig returns a KubeSchedulerConfiguration document with
// clientConnection.kubeconfig set to kubeconfig and leader election off, the
// rest unchanged. It edits the decoded document, not the text.
func RewriteSchedulerConfig(data []byte, kubeconfig string) ([]byte, error) {
	var doc map[string]interface{}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc == nil {
		return nil, fmt.Errorf("empty document")
	}
	setField(doc, "clientConnection", "kubeconfig", kubeconfig)
	setField(doc, "leaderElection", "leaderElect", false)
	return yaml.Marshal(doc)
}

// setField sets doc[section][key], making section a map when it is missing
// or not one.
func setField(doc map[string]interface{}, section, key string, value interface{}) {
	m, ok := doc[section].(map[string]interface{})
	if !ok {
		m = map[string]interface{}{}
		doc[section] = m
	}
	m[key] = value
}
