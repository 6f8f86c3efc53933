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
	"github.com/adminsched/scheduler-plugins/pkg/admissionpolicy"
	odsadmission "github.com/adminsched/scheduler-plugins/pkg/ondemandshare/admission"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/policy"
	"github.com/adminsched/scheduler-plugins/pkg/placementpolicy/admission"
)

// policiesInForceTimeout bounds the wait for the API server to apply the
// rendered policies: it learns of them through a watch, within a second.
const policiesInForceTimeout = 30 * time.Second

// admissionPolicies are the MutatingAdmissionPolicies rendered from a
// scheduler config: PlacementPolicy's rules and OnDemandShare's policies,
// either nil when the config has none.
type admissionPolicies struct {
	placement *admission.Result
	share     *odsadmission.Result
	// shared are the OnDemandShare policies compiled, which the
	// in-process controller decides the gated pods of.
	shared []*policy.Policy
}

// renderPolicies renders the PlacementPolicy rules of sc as
// bin/placement-admission does and its OnDemandShare policies as
// `ondemandshare-controller render` does. A config with nothing to render
// is an error: the flag would change nothing.
func renderPolicies(sc *schedconfig.Config) (*admissionPolicies, error) {
	fail := func(err error) error {
		return fmt.Errorf("--admission-policies: scheduler config %s: %w", sc.Source, err)
	}
	profiles, err := admission.FromConfig(sc.Loaded)
	if err != nil {
		return nil, fail(err)
	}
	res, err := admission.Render(profiles, admission.Options{})
	if err != nil {
		return nil, fail(err)
	}
	out := &admissionPolicies{}
	if len(res.Policies) > 0 {
		out.placement = res
	}
	shareProfiles, shared, err := sharePolicies(sc)
	if err != nil {
		return nil, fail(err)
	}
	if len(shared) > 0 {
		if out.share, err = odsadmission.Render(shareProfiles, odsadmission.Options{}); err != nil {
			return nil, fail(err)
		}
		out.shared = shared
	}
	if out.placement != nil || out.share != nil {
		return out, nil
	}
	why := "no profile runs PlacementPolicy at filter or score"
	if len(profiles) > 0 {
		why = "no PlacementPolicy rule renders"
		for _, s := range res.Skipped {
			why += fmt.Sprintf("; rule %q: %s", s.Rule, s.Reason)
		}
	}
	return nil, fail(fmt.Errorf("nothing to render: %s, and no profile holds OnDemandShare policies", why))
}

// sharePolicies returns the OnDemandShare args of sc's profiles and their
// policies compiled, each name once: render refuses two policies of one
// name that differ, so the first profile's copy stands for all.
func sharePolicies(sc *schedconfig.Config) ([]odsadmission.ProfileArgs, []*policy.Policy, error) {
	profiles, err := odsadmission.FromConfig(sc.Loaded)
	if err != nil {
		return nil, nil, err
	}
	var out []*policy.Policy
	seen := map[string]bool{}
	for _, p := range profiles {
		compiled, err := policy.Compile(p.Args)
		if err != nil {
			return nil, nil, fmt.Errorf("profile %s: %w", p.SchedulerName, err)
		}
		for _, c := range compiled {
			if !seen[c.Name] {
				seen[c.Name] = true
				out = append(out, c)
			}
		}
	}
	return profiles, out, nil
}

// apply applies the rendered policies and waits until the API server
// applies them to new pods: one canary, written after all of them, stands
// for every one (admissionpolicy.Renderer.WaitInForce).
func (a *admissionPolicies) apply(ctx context.Context, client kubernetes.Interface, source string, progress io.Writer) error {
	var names []string
	var pairs []admissionpolicy.Pair
	if a.placement != nil {
		for _, p := range a.placement.Policies {
			names = append(names, p.Policy.Name)
			pairs = append(pairs, admissionpolicy.Pair{Policy: p.Policy, Binding: p.Binding})
		}
	}
	if a.share != nil {
		for _, p := range a.share.Policies {
			names = append(names, p.Policy.Name)
		}
		pairs = append(pairs, a.share.Pairs()...)
	}
	fmt.Fprintf(progress, "applying the MutatingAdmissionPolicies rendered from %s: %s\n", source, strings.Join(names, ", "))
	if err := admissionpolicy.Apply(ctx, client, pairs); err != nil {
		return err
	}
	return admission.WaitInForce(ctx, client, "default", policiesInForceTimeout)
}
