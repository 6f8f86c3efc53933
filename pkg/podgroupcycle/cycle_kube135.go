//go:build kube1.35

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

package podgroupcycle

import fwk "k8s.io/kube-scheduler/framework"

// Is reports whether state is a pod-group scheduling cycle's: never on 1.35,
// whose scheduler has no pod-group cycles (CycleState has no
// IsPodGroupSchedulingCycle).
func Is(fwk.CycleState) bool { return false }
