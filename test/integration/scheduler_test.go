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

package integration

import (
	"sync"

	"k8s.io/kubernetes/cmd/kube-scheduler/app/config"
	"k8s.io/kubernetes/pkg/scheduler"
)

// runningScheduler is a scheduler run in the test process.
type runningScheduler struct {
	cc     *config.CompletedConfig
	sched  *scheduler.Scheduler
	cancel func()
	done   chan struct{}
	once   sync.Once
}

// stop ends the scheduler and waits for its loop to return. It is idempotent.
func (rs *runningScheduler) stop() {
	rs.once.Do(func() {
		rs.cancel()
		<-rs.done
		rs.cc.EventBroadcaster.Shutdown()
	})
}
