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

package main

import (
	"context"
	"fmt"

	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	schedconfig "k8s.io/kubernetes/cmd/kube-scheduler/app/config"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"

	"github.com/adminsched/scheduler-plugins/pkg/plugins"
)

// runningScheduler is our scheduler run in this process.
type runningScheduler struct {
	cc     *schedconfig.CompletedConfig
	cancel context.CancelFunc
	done   chan struct{}
}

// setupError is a config the scheduler refused at start-up (for example
// invalid plugin args): bad input, reported with the file name.
type setupError struct{ err error }

func (e *setupError) Error() string { return e.err.Error() }
func (e *setupError) Unwrap() error { return e.err }

// startScheduler builds the scheduler from the config copy through
// app.Setup with our plugins, the same path as bin/kube-scheduler, and runs
// it until stop is called or ctx ends.
func startScheduler(ctx context.Context, sc *schedConfig) (*runningScheduler, error) {
	ctx, cancel := context.WithCancel(ctx)
	opts := options.NewOptions()
	opts.ConfigFile = sc.path
	opts.SecureServing.BindPort = 0 // no HTTPS endpoint
	cc, sched, err := app.Setup(ctx, opts, plugins.Options()...)
	if err != nil {
		cancel()
		return nil, &setupError{fmt.Errorf("scheduler config %s: %w", sc.source, err)}
	}
	rs := &runningScheduler{cc: cc, cancel: cancel, done: make(chan struct{})}
	cc.EventBroadcaster.StartRecordingToSink(ctx.Done())
	cc.InformerFactory.Start(ctx.Done())
	if cc.DynInformerFactory != nil {
		cc.DynInformerFactory.Start(ctx.Done())
	}
	cc.InformerFactory.WaitForCacheSync(ctx.Done())
	if cc.DynInformerFactory != nil {
		cc.DynInformerFactory.WaitForCacheSync(ctx.Done())
	}
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		cancel()
		return nil, fmt.Errorf("scheduler handlers did not sync: %w", err)
	}
	go func() {
		defer close(rs.done)
		sched.Run(ctx)
	}()
	return rs, nil
}

// stop ends the scheduler and waits for its loop to return.
func (rs *runningScheduler) stop() {
	rs.cancel()
	<-rs.done
	rs.cc.EventBroadcaster.Shutdown()
}
