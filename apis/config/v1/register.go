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

package v1

import (
	"k8s.io/apimachinery/pkg/runtime"
	schedv1 "k8s.io/kube-scheduler/config/v1"
)

// GroupName is the API group of the scheduler's component config.
const GroupName = schedv1.GroupName

// SchemeGroupVersion is the version users write: kubescheduler.config.k8s.io/v1.
var SchemeGroupVersion = schedv1.SchemeGroupVersion

var (
	// SchemeBuilder registers the v1 args types of this repository, their
	// defaulters and (from the generated file) their conversions.
	SchemeBuilder      = runtime.NewSchemeBuilder(addKnownTypes, addDefaultingFuncs)
	localSchemeBuilder = &SchemeBuilder
	// AddToScheme adds the v1 args types, defaults and conversions to a scheme.
	AddToScheme = localSchemeBuilder.AddToScheme
)

func init() {
	// The scheduler decodes, defaults and converts pluginConfig args with a
	// scheme built from the kube-scheduler v1 builder: hooking in here is what
	// makes our kinds strictly decoded and defaulted like in-tree args.
	schedv1.SchemeBuilder.Register(AddToScheme)
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

func addDefaultingFuncs(scheme *runtime.Scheme) error {
	return RegisterDefaults(scheme)
}
