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

// Package localscheduler runs this repository's kube-scheduler inside the
// current process, built the way bin/kube-scheduler builds it (app.Setup with
// pkg/plugins), without its HTTPS endpoint or leader election. The playground
// and the integration tests use it.
package localscheduler

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	schedconfig "k8s.io/kubernetes/cmd/kube-scheduler/app/config"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler"

	"github.com/adminsched/scheduler-plugins/pkg/plugins"
)

// Scheduler is a scheduler built from a config file, run by Start until Stop.
type Scheduler struct {
	Config    *schedconfig.CompletedConfig
	Scheduler *scheduler.Scheduler

	ctx     context.Context
	cancel  context.CancelFunc
	running bool
	done    chan struct{}
	once    sync.Once
}

// Setup builds a scheduler from the KubeSchedulerConfiguration file at path,
// with our plugins and then extra registry options (which may replace a
// plugin's factory). An error here is the config's: it does not parse,
// validate, or a plugin refuses its args. The scheduler lives until ctx ends
// or Stop is called.
func Setup(ctx context.Context, path string, extra ...app.Option) (*Scheduler, error) {
	ctx, cancel := context.WithCancel(ctx)
	opts := options.NewOptions()
	opts.ConfigFile = path
	opts.SecureServing.BindPort = 0 // no HTTPS endpoint: several may run in one process
	cc, sched, err := app.Setup(ctx, opts, append(plugins.Options(), extra...)...)
	if err != nil {
		cancel()
		return nil, err
	}
	return &Scheduler{Config: cc, Scheduler: sched, ctx: ctx, cancel: cancel, done: make(chan struct{})}, nil
}

// Start starts the informers, waits until they and the scheduler's event
// handlers have synced, and runs the scheduling loop in the background.
func (s *Scheduler) Start() error {
	cc, ctx := s.Config, s.ctx
	cc.EventBroadcaster.StartRecordingToSink(ctx.Done())
	cc.InformerFactory.Start(ctx.Done())
	if cc.DynInformerFactory != nil {
		cc.DynInformerFactory.Start(ctx.Done())
	}
	cc.InformerFactory.WaitForCacheSync(ctx.Done())
	if cc.DynInformerFactory != nil {
		cc.DynInformerFactory.WaitForCacheSync(ctx.Done())
	}
	if err := s.Scheduler.WaitForHandlersSync(ctx); err != nil {
		s.cancel()
		return fmt.Errorf("scheduler event handlers did not sync: %w", err)
	}
	s.running = true
	go func() {
		defer close(s.done)
		s.Scheduler.Run(ctx)
	}()
	return nil
}

// Stop ends the scheduler and, if it was started, waits for its loop to
// return. It is idempotent; do not call it concurrently with Start.
func (s *Scheduler) Stop() {
	s.once.Do(func() {
		s.cancel()
		if s.running {
			<-s.done
		}
		s.Config.EventBroadcaster.Shutdown()
	})
}
