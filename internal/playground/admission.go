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
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/adminsched/scheduler-plugins/internal/playground/schedconfig"
	"github.com/adminsched/scheduler-plugins/pkg/placementpolicy/admission"
)

// policiesInForceTimeout bounds the wait for the API server to apply the
// rendered policies: it learns of them through a watch, within a second.
const policiesInForceTimeout = 30 * time.Second

// renderPolicies renders the PlacementPolicy rules of sc as
// MutatingAdmissionPolicies, as bin/placement-admission does. A config
// with nothing to render is an error: the flag would change nothing.
func renderPolicies(sc *schedconfig.Config) (*admission.Result, error) {
	profiles, err := admission.FromConfig(sc.Loaded)
	if err != nil {
		return nil, fmt.Errorf("--admission-policies: scheduler config %s: %w", sc.Source, err)
	}
	res, err := admission.Render(profiles, admission.Options{})
	if err != nil {
		return nil, fmt.Errorf("--admission-policies: scheduler config %s: %w", sc.Source, err)
	}
	if len(res.Policies) == 0 {
		why := "no profile runs PlacementPolicy at filter or score"
		if len(profiles) > 0 {
			why = "no PlacementPolicy rule renders"
			for _, s := range res.Skipped {
				why += fmt.Sprintf("; rule %q: %s", s.Rule, s.Reason)
			}
		}
		return nil, fmt.Errorf("--admission-policies: scheduler config %s: nothing to render: %s", sc.Source, why)
	}
	return res, nil
}

// applyPolicies applies the rendered policies and waits until the API
// server applies them to new pods.
func applyPolicies(ctx context.Context, client kubernetes.Interface, res *admission.Result, source string, progress io.Writer) error {
	names := make([]string, 0, len(res.Policies))
	for _, p := range res.Policies {
		names = append(names, p.Policy.Name)
	}
	fmt.Fprintf(progress, "applying the MutatingAdmissionPolicies rendered from %s: %s\n", source, strings.Join(names, ", "))
	if err := admission.Apply(ctx, client, res); err != nil {
		return err
	}
	return admission.WaitInForce(ctx, client, "default", policiesInForceTimeout)
}
