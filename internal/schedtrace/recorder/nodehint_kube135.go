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

package recorder

import (
	"context"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// GetNodeHint bridges Framework.GetNodeHint, which in 1.35 signs the pod
// and returns its signature with the hint. It gives no hint (see the
// package documentation) and no signature: with neither, the framework
// keeps no batch of nodes for pods like this one, which no hint would use.
func (f *recordingFramework) GetNodeHint(context.Context, *v1.Pod, fwk.CycleState, int64) (string, fwk.PodSignature) {
	return "", nil
}
