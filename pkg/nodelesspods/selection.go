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

package nodelesspods

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/pkg/podowner"
)

// podSelector decides which pods NodeLessPods counts, from the args.
type podSelector struct {
	// labels is nil when every pod's labels qualify.
	labels labels.Selector
	// namespaces is empty when every namespace qualifies.
	namespaces      sets.Set[string]
	ignoreDaemonSet bool
}

func newPodSelector(args *config.NodeLessPodsArgs) (*podSelector, error) {
	s := &podSelector{
		namespaces:      sets.New(args.Namespaces...),
		ignoreDaemonSet: args.IgnoreDaemonSetPods,
	}
	if args.PodSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(args.PodSelector)
		if err != nil {
			return nil, err
		}
		s.labels = sel
	}
	return s, nil
}

// counts reports whether pod is one of the pods the plugin counts.
func (s *podSelector) counts(pod *v1.Pod) bool {
	if len(s.namespaces) > 0 && !s.namespaces.Has(pod.Namespace) {
		return false
	}
	if s.ignoreDaemonSet && podowner.IsDaemonSetPod(pod) {
		return false
	}
	return s.labels == nil || s.labels.Matches(labels.Set(pod.Labels))
}
