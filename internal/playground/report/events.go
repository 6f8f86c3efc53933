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

package report

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// FailedScheduling is the reason of the event the scheduler records when it
// finds no node for a pod.
const FailedScheduling = "FailedScheduling"

// UnschedulableMessages is the message of the last FailedScheduling event
// of each pod in events, keyed by the event's namespace and the name of
// the object it is about. Other events are ignored, and so is a pod whose
// last FailedScheduling event has no message. Among events of the same
// time, the first in events is taken.
func UnschedulableMessages(events []corev1.Event) map[types.NamespacedName]string {
	last := map[types.NamespacedName]*corev1.Event{}
	for i := range events {
		e := &events[i]
		if e.Reason != FailedScheduling {
			continue
		}
		k := types.NamespacedName{Namespace: e.Namespace, Name: e.InvolvedObject.Name}
		if l := last[k]; l == nil || eventTime(e).After(eventTime(l).Time) {
			last[k] = e
		}
	}
	out := make(map[types.NamespacedName]string, len(last))
	for k, e := range last {
		if e.Message != "" {
			out[k] = e.Message
		}
	}
	return out
}

// eventTime is when e last happened: its last timestamp (core/v1 events),
// else its event time (events/v1 ones, which the scheduler records), else
// its creation.
func eventTime(e *corev1.Event) metav1.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp
	case !e.EventTime.IsZero():
		return metav1.Time{Time: e.EventTime.Time}
	default:
		return e.CreationTimestamp
	}
}
