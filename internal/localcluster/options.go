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

import "strings"

// Option changes how Start runs the cluster.
type Option func(*options)

type options struct {
	apiServerArgs         [][2]string
	controllerManagerArgs []string
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
// away.
func WithPodGroupAPI() Option {
	return func(o *options) {
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
