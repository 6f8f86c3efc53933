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

package admission

import (
	"fmt"
	"io"

	"github.com/adminsched/scheduler-plugins/pkg/admissionpolicy"
)

// WriteYAMLFor writes the rendered objects as one YAML stream for kubectl
// apply -f, for an API server that serves the policies as served says,
// headed by a comment naming source.
func (r *Result) WriteYAMLFor(w io.Writer, source string, served admissionpolicy.Served) error {
	header := []string{
		fmt.Sprintf("MutatingAdmissionPolicies rendered from the OnDemandShare policies of %s.", source),
		"They gate and label the pods each policy selects, at creation; the ondemandshare controller decides",
		"each pod's capacity class and removes the gate. Regenerate them when the policies change.",
		served.Comment(),
	}
	if len(r.Policies) == 0 {
		header = append(header, "No policy to render.")
	}
	return admissionpolicy.WriteYAML(w, header, served, r.Pairs())
}
