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

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
)

// Controller is what a controller binary's run subcommand shares with the
// others: its name, its cluster, its leader election and its HTTP server.
type Controller struct {
	// Name is the client's user agent and the events' component.
	Name           string
	Kubeconfig     string
	LeaderElection LeaderElection
	// HTTPAddress of ServeHTTP; empty: no server.
	HTTPAddress string
	// RegisterMetrics registers the controller's metrics before /metrics
	// is served.
	RegisterMetrics func()
	// Leading and its key/value pairs are logged when this replica
	// becomes the leader.
	Leading       string
	LeadingValues []any
}

// Check fails on leader election flags that client-go's elector would
// panic on. Run checks first; a caller with checks of its own calls Check
// before them, so that a flag error comes first whatever the config says.
func (c Controller) Check() error {
	if c.LeaderElection.Enabled {
		return c.LeaderElection.Check()
	}
	return nil
}

// Run connects to the cluster, records events, registers the metrics,
// serves HTTP and runs body, on the leader only when leader election is
// enabled. An error of body once ctx is done is a stop, not a failure
// (StopQuietly).
func (c Controller) Run(ctx context.Context, body func(ctx context.Context, restConfig *rest.Config, client kubernetes.Interface, recorder record.EventRecorder) error) error {
	if err := c.Check(); err != nil {
		return err
	}
	restConfig, err := ClientConfig(c.Kubeconfig, c.Name)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return err
	}
	recorder, shutdown := NewEventRecorder(ctx, client, c.Name)
	defer shutdown()
	if c.RegisterMetrics != nil {
		c.RegisterMetrics()
	}
	if c.HTTPAddress != "" {
		if err := ServeHTTP(ctx, c.HTTPAddress); err != nil {
			return err
		}
	}
	run := StopQuietly(func(ctx context.Context) error { return body(ctx, restConfig, client, recorder) })
	if !c.LeaderElection.Enabled {
		return run(ctx)
	}
	return c.LeaderElection.Run(ctx, client, recorder, func(ctx context.Context) error {
		klog.FromContext(ctx).Info(c.Leading, c.LeadingValues...)
		return run(ctx)
	})
}
