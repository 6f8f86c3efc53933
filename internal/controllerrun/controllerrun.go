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

// Package controllerrun is the process plumbing that the controller
// binaries (cmd/license-driver's controller, cmd/ondemandshare-controller)
// share: logging and SIGTERM, --kubeconfig, event recording, leader election
// on a Lease, and /metrics and the health endpoints over plain HTTP or
// HTTPS with delegated authentication and authorization.
package controllerrun

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
)

// StopQuietly returns run, except that an error once ctx is done is the
// stop's (SIGTERM while the controller waits for its informers), not a
// failure: the process exits 0 as on any SIGTERM.
func StopQuietly(run func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		err := run(ctx)
		if err != nil && ctx.Err() != nil {
			klog.FromContext(ctx).V(2).Info("Stopped while starting", "err", err)
			return nil
		}
		return err
	}
}

// NewEventRecorder records events of component through client. Its events
// are sent until shutdown is called, not until ctx ends: releasing the
// Lease after SIGTERM (ctx) records an event. Call shutdown on return.
func NewEventRecorder(ctx context.Context, client kubernetes.Interface, component string) (recorder record.EventRecorder, shutdown func()) {
	broadcaster := record.NewBroadcaster(record.WithContext(context.WithoutCancel(ctx)))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	return broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: component}), broadcaster.Shutdown
}
