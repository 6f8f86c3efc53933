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
	"bytes"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
)

// writeOutput writes the runs; in JSON, explanations are in the pods. YAML
// is the JSON document, rendered as YAML.
func writeOutput(w io.Writer, format string, explain bool, runs []report.Run) error {
	switch {
	case format == "yaml":
		var doc bytes.Buffer
		if err := writeOutput(&doc, "json", explain, runs); err != nil {
			return err
		}
		out, err := yaml.JSONToYAML(doc.Bytes())
		if err != nil {
			return err
		}
		_, err = w.Write(out)
		return err
	case len(runs) == 1 && format == "json":
		return report.WriteJSON(w, runs[0].Result)
	case format == "json":
		return report.WriteCompareJSON(w, runs)
	case len(runs) == 1:
		if err := report.WriteText(w, runs[0].Result); err != nil || !explain {
			return err
		}
		fmt.Fprintln(w)
		return report.WriteExplainText(w, runs[0].Result)
	default:
		if err := report.WriteCompareText(w, runs); err != nil || !explain {
			return err
		}
		fmt.Fprintln(w)
		return report.WriteCompareExplainText(w, runs)
	}
}
