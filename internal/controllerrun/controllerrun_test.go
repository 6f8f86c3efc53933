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

package controllerrun

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
)

// TestStopQuietly: an error of the controller once its context is done
// (SIGTERM during its start) is not a failure; any other error is.
func TestStopQuietly(t *testing.T) {
	failed := errors.New("the publisher failed")
	for _, tc := range []struct {
		name    string
		stopped bool
		err     error
		want    error
	}{
		{name: "stopped while starting", stopped: true, err: fmt.Errorf("sync ResourceSlice informer: %w", context.Canceled)},
		{name: "stopped", stopped: true},
		{name: "fails while running", err: failed, want: failed},
		{name: "returns", err: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			if tc.stopped {
				cancel()
			}
			got := StopQuietly(func(context.Context) error { return tc.err })(ctx)
			if !errors.Is(got, tc.want) || (tc.want == nil && got != nil) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestNewEventRecorder: events reach the API server with the component as
// their source, also once the process's context has ended (SIGTERM), so
// that the Lease's release is recorded.
func TestNewEventRecorder(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	client := fake.NewClientset()
	recorder, shutdown := NewEventRecorder(ctx, client, "my-controller")
	defer shutdown()
	cancel()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	recorder.Event(pod, corev1.EventTypeNormal, "Stopped", "after SIGTERM")
	var events *corev1.EventList
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		events, err = client.CoreV1().Events("ns").List(ctx, metav1.ListOptions{})
		return err == nil && len(events.Items) > 0, err
	})
	if err != nil {
		t.Fatalf("no event reached the API server: %v", err)
	}
	if e := events.Items[0]; e.Source.Component != "my-controller" || e.Reason != "Stopped" || e.InvolvedObject.Name != "p" {
		t.Errorf("event %s from %q about %s, want Stopped from \"my-controller\" about p", e.Reason, e.Source.Component, e.InvolvedObject.Name)
	}
}
