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

package admissionpolicy

import (
	"bytes"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// Objects returns the objects of pairs in the order to apply them: each
// policy before its binding.
func Objects(pairs []Pair) []runtime.Object {
	objs := make([]runtime.Object, 0, 2*len(pairs))
	for _, p := range pairs {
		objs = append(objs, p.Policy, p.Binding)
	}
	return objs
}

// WriteYAML writes the objects of pairs as one YAML stream for kubectl
// apply -f, as admissionregistration.k8s.io/<served.Version> (v1beta1 has
// v1's fields), after a comment of the header lines (empty ones left out).
func WriteYAML(w io.Writer, header []string, served Served, pairs []Pair) error {
	var buf bytes.Buffer
	for _, line := range header {
		if line != "" {
			fmt.Fprintf(&buf, "# %s\n", line)
		}
	}
	for _, obj := range Objects(pairs) {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return err
		}
		// An unset timestamp would print as null, which apply ignores
		// but readers stumble on.
		if meta, ok := u["metadata"].(map[string]interface{}); ok {
			delete(meta, "creationTimestamp")
		}
		u["apiVersion"] = GroupVersion.Group + "/" + served.Version
		data, err := yaml.Marshal(u)
		if err != nil {
			return err
		}
		buf.WriteString("---\n")
		buf.Write(data)
	}
	_, err := w.Write(buf.Bytes())
	return err
}
