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

package localcluster

import (
	"strings"

	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

// Option changes how Start runs the cluster.
type Option func(*options)

type options struct {
	apiServerArgs         [][2]string
	controllerManagerArgs []string
	// err is what Start fails with: an option this minor cannot honour.
	err error
}

// WithAPIServerArg passes --name=value to kube-apiserver after Start's own
// flags. List flags given again accumulate (--feature-gates,
// --runtime-config, --disable-admission-plugins).
func WithAPIServerArg(name, value string) Option {
	return func(o *options) { o.apiServerArgs = append(o.apiServerArgs, [2]string{name, value}) }
}

// WithControllerManagerArg passes --name=value to kube-controller-manager
// after Start's own flags.
func WithControllerManagerArg(name, value string) Option {
	return func(o *options) { o.controllerManagerArgs = append(o.controllerManagerArgs, "--"+name+"="+value) }
}

// WithPodGroupAPI makes the API server serve PodGroups (PodGroupAPIVersion,
// off unless asked for) and keep pods' spec.schedulingGroup, with
// PodGroupGates on, and switches those gates on in the controller-manager
// where the minor wants them there too. It changes nothing for pods without
// a scheduling group. PodGroupProtection admission, on with the gates, puts
// a finalizer on every PodGroup that only the controller-manager's
// podgroup-protection controller removes; Start does not run it, so the
// admission plugin is off, or no namespace holding a PodGroup would ever go
// away. On a minor without PodGroups (kubeversion.PodGroups) Start fails
// with that error rather than run a cluster that silently has none.
func WithPodGroupAPI() Option {
	return func(o *options) {
		if !kubeversion.Has(kubeversion.PodGroups) {
			o.err = kubeversion.Unavailable(kubeversion.PodGroups)
			return
		}
		gates := strings.Join(PodGroupGates, "=true,") + "=true"
		o.apiServerArgs = append(o.apiServerArgs,
			[2]string{"feature-gates", gates},
			[2]string{"runtime-config", PodGroupAPIVersion + "=true"},
			[2]string{"disable-admission-plugins", "PodGroupProtection"})
		if podGroupGatesOnControllerManager {
			o.controllerManagerArgs = append(o.controllerManagerArgs, "--feature-gates="+gates)
		}
	}
}

// WithMutatingAdmissionPolicy makes the API server serve and apply
// MutatingAdmissionPolicies. Minors with the v1 API
// (kubeversion.MutatingAdmissionPolicyV1) do by default; 1.35 serves them
// as v1beta1 only with the MutatingAdmissionPolicy gate and that version
// switched on, as a real 1.35 cluster running placement-admission must.
func WithMutatingAdmissionPolicy() Option {
	return func(o *options) {
		if kubeversion.Has(kubeversion.MutatingAdmissionPolicyV1) {
			return
		}
		o.apiServerArgs = append(o.apiServerArgs,
			[2]string{"feature-gates", "MutatingAdmissionPolicy=true"},
			[2]string{"runtime-config", "admissionregistration.k8s.io/v1beta1=true"})
	}
}
