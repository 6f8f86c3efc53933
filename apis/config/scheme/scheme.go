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

// Package scheme adds this repository's plugin args to the scheduler's global
// config scheme. Import it (blank) in any scheduler build that registers our
// plugins; importing a plugin package does it already.
package scheme

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	schedscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"

	"github.com/adminsched/scheduler-plugins/apis/config"
	configv1 "github.com/adminsched/scheduler-plugins/apis/config/v1"
)

// Scheme is the scheduler's global config scheme, which decodes config files.
var Scheme = schedscheme.Scheme

func init() {
	// The global scheme was built in its package's init, before our builders
	// were hooked in, so our kinds are added to it here.
	AddToScheme(Scheme)
}

// AddToScheme adds the internal and v1 args types of this repository to s.
func AddToScheme(s *runtime.Scheme) {
	utilruntime.Must(config.AddToScheme(s))
	utilruntime.Must(configv1.AddToScheme(s))
}
