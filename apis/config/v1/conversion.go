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
	"k8s.io/apimachinery/pkg/conversion"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

// The v1 policy keeps capacity and recovery behind pointers so that an
// omitted block is defaulted as a whole; the internal policy holds them by
// value, so conversion-gen leaves these two fields to us.

// Convert_v1_OnDemandSharePolicy_To_config_OnDemandSharePolicy converts a
// defaulted v1 policy; a nil block converts to its zero value.
func Convert_v1_OnDemandSharePolicy_To_config_OnDemandSharePolicy(in *OnDemandSharePolicy, out *config.OnDemandSharePolicy, s conversion.Scope) error {
	if err := autoConvert_v1_OnDemandSharePolicy_To_config_OnDemandSharePolicy(in, out, s); err != nil {
		return err
	}
	out.Capacity = config.CapacityClasses{}
	if in.Capacity != nil {
		if err := Convert_v1_CapacityClasses_To_config_CapacityClasses(in.Capacity, &out.Capacity, s); err != nil {
			return err
		}
	}
	out.Recovery = config.SpotRecovery{}
	if in.Recovery != nil {
		return Convert_v1_SpotRecovery_To_config_SpotRecovery(in.Recovery, &out.Recovery, s)
	}
	return nil
}

// Convert_config_OnDemandSharePolicy_To_v1_OnDemandSharePolicy converts an
// internal policy; both blocks are always set in the result.
func Convert_config_OnDemandSharePolicy_To_v1_OnDemandSharePolicy(in *config.OnDemandSharePolicy, out *OnDemandSharePolicy, s conversion.Scope) error {
	if err := autoConvert_config_OnDemandSharePolicy_To_v1_OnDemandSharePolicy(in, out, s); err != nil {
		return err
	}
	out.Capacity = &CapacityClasses{}
	if err := Convert_config_CapacityClasses_To_v1_CapacityClasses(&in.Capacity, out.Capacity, s); err != nil {
		return err
	}
	out.Recovery = &SpotRecovery{}
	return Convert_config_SpotRecovery_To_v1_SpotRecovery(&in.Recovery, out.Recovery, s)
}
