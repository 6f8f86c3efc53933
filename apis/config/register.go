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

package config

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
)

// GroupName is the API group of the scheduler's component config, which the
// plugin args share.
const GroupName = schedconfig.GroupName

// SchemeGroupVersion is the internal version of the args types.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: runtime.APIVersionInternal}

var (
	// SchemeBuilder registers the internal args types of this repository only.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the internal args types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func init() {
	// The scheduler builds its plugin-args scheme lazily from its own builder:
	// hooking in here makes every scheme built from it know our kinds.
	schedconfig.SchemeBuilder.Register(AddToScheme)
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&NodeLessPodsArgs{},
		&PlacementPolicyArgs{},
		&MaintenanceWindowArgs{},
		&OnDemandShareArgs{},
	)
	return nil
}
