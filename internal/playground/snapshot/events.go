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

package snapshot

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// failedScheduling is the reason of the scheduler's events on a pod it
// could not place.
const failedScheduling = "FailedScheduling"

// lastFailedScheduling returns the message of each pod's last
// FailedScheduling event in namespace ("" for every namespace), by the
// pod's UID (a pod recreated under its name has other events), on one
// line. Events live an hour by default: a pod that waits longer may have
// none.
func lastFailedScheduling(ctx context.Context, client kubernetes.Interface, namespace string, limit int64) (map[types.UID]string, error) {
	type last struct {
		at      time.Time
		message string
	}
	latest := map[types.UID]last{}
	cont := ""
	for {
		list, err := client.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{
			Limit: limit, Continue: cont,
			FieldSelector: "reason=" + failedScheduling + ",involvedObject.kind=Pod",
		})
		if err != nil {
			return nil, fmt.Errorf("listing FailedScheduling events: %w", err)
		}
		for i := range list.Items {
			e := &list.Items[i]
			if e.Reason != failedScheduling || e.InvolvedObject.Kind != "Pod" {
				continue // checked again: not every server applies field selectors
			}
			uid, at := e.InvolvedObject.UID, eventTime(e)
			if prev, ok := latest[uid]; !ok || !at.Before(prev.at) {
				latest[uid] = last{at: at, message: strings.Join(strings.Fields(e.Message), " ")}
			}
		}
		if cont = list.Continue; cont == "" {
			break
		}
	}
	out := make(map[types.UID]string, len(latest))
	for uid, l := range latest {
		out[uid] = l.message
	}
	return out, nil
}

// eventTime is when e was last seen: the scheduler writes events.k8s.io
// events, whose repeats move series.lastObservedTime, not lastTimestamp.
func eventTime(e *corev1.Event) time.Time {
	t := e.CreationTimestamp.Time
	for _, c := range []time.Time{e.EventTime.Time, e.LastTimestamp.Time} {
		if c.After(t) {
			t = c
		}
	}
	if e.Series != nil && e.Series.LastObservedTime.After(t) {
		t = e.Series.LastObservedTime.Time
	}
	return t
}
