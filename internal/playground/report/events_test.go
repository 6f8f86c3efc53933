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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestUnschedulableMessages(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(t0.Add(d)) }
	event := func(ns, pod, reason, msg string, set func(*corev1.Event)) corev1.Event {
		e := corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Namespace: ns, Name: pod + ".1"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: pod},
			Reason:         reason, Message: msg,
		}
		if set != nil {
			set(&e)
		}
		return e
	}
	last := func(d time.Duration) func(*corev1.Event) { return func(e *corev1.Event) { e.LastTimestamp = at(d) } }
	eventTime := func(d time.Duration) func(*corev1.Event) {
		return func(e *corev1.Event) { e.EventTime = metav1.NewMicroTime(t0.Add(d)) }
	}
	created := func(d time.Duration) func(*corev1.Event) {
		return func(e *corev1.Event) { e.CreationTimestamp = at(d) }
	}
	key := func(ns, name string) types.NamespacedName { return types.NamespacedName{Namespace: ns, Name: name} }

	tests := []struct {
		name   string
		events []corev1.Event
		want   map[types.NamespacedName]string
	}{
		{"none", nil, map[types.NamespacedName]string{}},
		{
			name: "only FailedScheduling",
			events: []corev1.Event{
				event("ns", "p", "Scheduled", "assigned", last(2*time.Second)),
				event("ns", "p", "FailedScheduling", "0/3 nodes", last(time.Second)),
			},
			want: map[types.NamespacedName]string{key("ns", "p"): "0/3 nodes"},
		},
		{
			name: "the latest by last timestamp, whatever the list order",
			events: []corev1.Event{
				event("ns", "p", "FailedScheduling", "new", last(3*time.Second)),
				event("ns", "p", "FailedScheduling", "old", last(time.Second)),
			},
			want: map[types.NamespacedName]string{key("ns", "p"): "new"},
		},
		{
			name: "event time when no last timestamp, creation when neither",
			events: []corev1.Event{
				event("ns", "a", "FailedScheduling", "a-old", created(time.Second)),
				event("ns", "a", "FailedScheduling", "a-new", eventTime(2*time.Second)),
				event("ns", "b", "FailedScheduling", "b-new", created(5*time.Second)),
				event("ns", "b", "FailedScheduling", "b-old", eventTime(4*time.Second)),
			},
			want: map[types.NamespacedName]string{key("ns", "a"): "a-new", key("ns", "b"): "b-new"},
		},
		{
			name: "equal times: the first listed",
			events: []corev1.Event{
				event("ns", "p", "FailedScheduling", "first", last(time.Second)),
				event("ns", "p", "FailedScheduling", "second", last(time.Second)),
			},
			want: map[types.NamespacedName]string{key("ns", "p"): "first"},
		},
		{
			name: "per namespace and pod",
			events: []corev1.Event{
				event("a", "p", "FailedScheduling", "in a", nil),
				event("b", "p", "FailedScheduling", "in b", nil),
				event("a", "q", "FailedScheduling", "q in a", nil),
			},
			want: map[types.NamespacedName]string{key("a", "p"): "in a", key("b", "p"): "in b", key("a", "q"): "q in a"},
		},
		{
			name: "a latest event without a message hides the older ones",
			events: []corev1.Event{
				event("ns", "p", "FailedScheduling", "old", last(time.Second)),
				event("ns", "p", "FailedScheduling", "", last(2*time.Second)),
			},
			want: map[types.NamespacedName]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, UnschedulableMessages(tt.events)); diff != "" {
				t.Errorf("UnschedulableMessages (-want +got):\n%s", diff)
			}
		})
	}
}
