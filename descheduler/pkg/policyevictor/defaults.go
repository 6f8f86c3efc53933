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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// DefaultAdmittedTTL is AdmittedTTL's default: long enough for a
// replacement pod to be created, scheduled and seen by the informers.
const DefaultAdmittedTTL = 2 * time.Minute

// SetDefaults_PolicyEvictorArgs fills the optional fields. SchedulerName
// stays empty: the profile it stands for is found when the plugin is built.
func SetDefaults_PolicyEvictorArgs(obj *PolicyEvictorArgs) {
	if obj.Preferred == "" {
		obj.Preferred = PreferredRespect
	}
	if obj.AdmittedTTL == nil {
		obj.AdmittedTTL = &metav1.Duration{Duration: DefaultAdmittedTTL}
	}
}

// Default is the registry's defaulter: the descheduler calls it after
// validation, with the args it decoded.
func Default(obj runtime.Object) {
	if args, ok := obj.(*PolicyEvictorArgs); ok {
		SetObjectDefaults_PolicyEvictorArgs(args)
	}
}
