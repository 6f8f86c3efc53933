//go:build kube1.36 || kube1.35

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

package recorder

import fwk "k8s.io/kube-scheduler/framework"

// rawScores bridges fwk.NodePluginScores.RawScores, which exists since
// 1.37: 1.36 and 1.35 report only weighted scores, so there are none to
// record (kubeversion.RawScores).
func rawScores(fwk.NodePluginScores) map[string]int64 { return nil }
