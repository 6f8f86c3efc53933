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

	"github.com/adminsched/scheduler-plugins/internal/localscheduler"
)

// setupError is a config the scheduler refused at start-up (for example
// invalid plugin args): bad input, reported with the file name.
type setupError struct{ err error }

func (e *setupError) Error() string { return e.err.Error() }
func (e *setupError) Unwrap() error { return e.err }

// startScheduler builds the scheduler from the config copy the way
// bin/kube-scheduler does, and runs it until it is stopped or ctx ends.
func startScheduler(ctx context.Context, sc *schedConfig) (*localscheduler.Scheduler, error) {
	s, err := localscheduler.Setup(ctx, sc.path)
	if err != nil {
		return nil, &setupError{fmt.Errorf("scheduler config %s: %w", sc.source, err)}
	}
	if err := s.Start(); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}
