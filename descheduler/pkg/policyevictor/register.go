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

package policyevictor

import (
	"k8s.io/apimachinery/pkg/runtime"
)

var (
	// SchemeBuilder adds the args' defaulting functions to a scheme.
	SchemeBuilder      = runtime.NewSchemeBuilder()
	localSchemeBuilder = &SchemeBuilder
	// AddToScheme adds the args' defaulting functions to a scheme, as the
	// descheduler does for its own plugins' args.
	AddToScheme = localSchemeBuilder.AddToScheme
)

func init() {
	// The generated defaulters register themselves in the generated file.
	localSchemeBuilder.Register(RegisterDefaults)
}
