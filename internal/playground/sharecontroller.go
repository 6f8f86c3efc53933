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

package playground

import (
	"context"
	"fmt"
	"io"
	"sync"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/controller"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/policy"
)

// shareWorkers is the in-process controller's workers, as its Deployment's
// default: one workload is never decided by two.
const shareWorkers = 4

// shareController is the OnDemandShare controller running in this process
// (pkg/ondemandshare/controller, as `ondemandshare-controller run` builds
// it, without leader election): the admission policies gate the pods it
// decides, which would otherwise wait for ever.
type shareController struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	err    error
}

// startShareController starts the controller of policies on client; stop
// stops it and waits for it.
func startShareController(ctx context.Context, client kubernetes.Interface, policies []*policy.Policy, progress io.Writer) (*shareController, error) {
	what := fmt.Sprintf("%d policies", len(policies))
	if len(policies) == 1 {
		what = "1 policy"
	}
	fmt.Fprintf(progress, "starting the OnDemandShare controller (%s) for the pods the admission policies gate\n", what)
	c, err := controller.New(client, informers.NewSharedInformerFactory(client, 0), policies)
	if err != nil {
		return nil, fmt.Errorf("the OnDemandShare controller: %w", err)
	}
	ctx, cancel := context.WithCancel(klog.NewContext(ctx, klog.FromContext(ctx).WithName("ondemandshare-controller")))
	s := &shareController{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		if err := c.Run(ctx, shareWorkers); err != nil && ctx.Err() == nil {
			s.mu.Lock()
			s.err = fmt.Errorf("the OnDemandShare controller stopped: %w", err)
			s.mu.Unlock()
		}
	}()
	return s, nil
}

// Err is why the controller stopped before stop, else nil.
func (s *shareController) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// stop stops the controller and waits until its workers have.
func (s *shareController) stop() {
	s.cancel()
	<-s.done
}
