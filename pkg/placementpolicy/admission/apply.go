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

package admission

import (
	"context"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/adminsched/scheduler-plugins/pkg/admissionpolicy"
)

// Apply creates the rendered objects, or updates those that exist, each
// policy before its binding.
func Apply(ctx context.Context, client kubernetes.Interface, res *Result) error {
	return admissionpolicy.Apply(ctx, client, res.pairs())
}

// Delete removes the rendered objects; those already gone are no error.
func Delete(ctx context.Context, client kubernetes.Interface, res *Result) error {
	return admissionpolicy.Delete(ctx, client, res.pairs())
}

// WaitInForce returns once the API server applies every policy and binding
// created before the call, or fails after timeout (see
// admissionpolicy.Renderer.WaitInForce).
func WaitInForce(ctx context.Context, client kubernetes.Interface, namespace string, timeout time.Duration) error {
	return renderer.WaitInForce(ctx, client, namespace, timeout)
}

// Served is how a kube-apiserver serves MutatingAdmissionPolicy.
type Served = admissionpolicy.Served

// ServedBy returns how a kube-apiserver of Kubernetes 1.<minor> serves
// MutatingAdmissionPolicy; newest is the minor the caller is built from.
func ServedBy(minor, newest int) (Served, error) { return admissionpolicy.ServedBy(minor, newest) }

func (r *Result) pairs() []admissionpolicy.Pair {
	pairs := make([]admissionpolicy.Pair, 0, len(r.Policies))
	for _, p := range r.Policies {
		pairs = append(pairs, admissionpolicy.Pair{Policy: p.Policy, Binding: p.Binding})
	}
	return pairs
}
