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

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/adminsched/scheduler-plugins/pkg/admissionpolicy"
	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

// Objects returns the rendered objects in the order to apply them: each
// policy before its binding.
func (r *Result) Objects() []runtime.Object { return admissionpolicy.Objects(r.pairs()) }

// WriteYAML writes the rendered objects as one YAML stream for kubectl
// apply -f, headed by a comment naming source and listing the rules that
// were not rendered, and why. They are for the Kubernetes minor this build's
// libraries come from: admissionregistration.k8s.io/v1 from 1.36, v1beta1
// for 1.35.
func (r *Result) WriteYAML(w io.Writer, source string) error {
	served, err := ServedBy(kubeversion.Minor, kubeversion.Minor)
	if err != nil {
		return err
	}
	return r.WriteYAMLFor(w, source, served)
}

// WriteYAMLFor is WriteYAML for an API server that serves the policies at
// served.Version. Only the apiVersion differs: v1beta1 has v1's fields.
func (r *Result) WriteYAMLFor(w io.Writer, source string, served Served) error {
	header := []string{
		fmt.Sprintf("MutatingAdmissionPolicies rendered from the PlacementPolicy rules of %s.", source),
		"Regenerate them when the rules change; pods that exist keep the affinity they were admitted with.",
		served.Comment(),
	}
	for _, s := range r.Skipped {
		header = append(header, fmt.Sprintf("Rule %q is not rendered: %s.", s.Rule, s.Reason))
	}
	if len(r.Policies) == 0 {
		header = append(header, "No rule to render.")
	}
	return admissionpolicy.WriteYAML(w, header, served, r.pairs())
}
