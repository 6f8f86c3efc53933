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
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// Write writes s as a scenario file: header (comment lines, without
// the leading "# "), the nodes in block YAML, then one bound pod per line
// in flow style (JSON, which is YAML), which keeps a file of many pods short
// and quick to decode.
func Write(w io.Writer, s *Scenario, header []string) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	for _, line := range header {
		fmt.Fprintf(bw, "# %s\n", line)
	}
	nodes, err := yaml.Marshal(struct {
		Nodes []NodeSpec `json:"nodes"`
	}{s.Nodes})
	if err != nil {
		return err
	}
	_, _ = bw.Write(nodes)
	if len(s.BoundPods) > 0 {
		_, _ = bw.WriteString("boundPods:\n")
	}
	for i := range s.BoundPods {
		data, err := json.Marshal(&s.BoundPods[i])
		if err != nil {
			return err
		}
		_, _ = bw.WriteString("- ")
		_, _ = bw.Write(data)
		_ = bw.WriteByte('\n')
	}
	return bw.Flush()
}
