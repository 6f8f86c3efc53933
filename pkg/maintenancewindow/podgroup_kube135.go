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

package maintenancewindow

import v1 "k8s.io/api/core/v1"

// 1.35 has no scheduler pod groups (PodSpec.SchedulingGroup and
// Handle.PodGroupManager are new in 1.36): every pod runs on its own.

// podGroupName returns "": no pod belongs to a pod group on 1.35.
func podGroupName(*v1.Pod) string { return "" }

// groupMembers knows no pod group on 1.35.
func (pl *MaintenanceWindow) groupMembers(string, string) ([]*v1.Pod, bool) { return nil, false }
