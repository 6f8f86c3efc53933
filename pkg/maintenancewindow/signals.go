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

package maintenancewindow

import (
	"context"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/window"
)

// nodeSignals keeps the names of the nodes that carry a value in any of the
// plugin's sources, well-formed or not, from the scheduler's node informer.
// While there is none, no node can block or rank a pod, and PreFilter and
// PreScore return Skip so that the framework calls neither Filter nor Score:
// a cluster without windows pays one atomic load per cycle.
//
// The count may briefly lag the scheduler's snapshot: the two are fed by
// separate handlers of the same node informer, as is any plugin state fed by
// an informer. A cycle in that gap may skip a node's first window, or run
// Filter and Score once after the last one is gone. Both are harmless: a
// window is announced hours before it opens or blocks (avoidWithin), and
// the next cycle sees it.
type nodeSignals struct {
	sources *window.Sources
	reg     cache.ResourceEventHandlerRegistration
	// synced is set once the informer's initial list has reached the
	// handler; until then none reports false, so that no cycle skips a
	// window that is not counted yet.
	synced atomic.Bool
	count  atomic.Int64
	// done is closed once the handler is removed.
	done chan struct{}

	mu    sync.Mutex
	nodes map[string]struct{}
}

// newNodeSignals counts the nodes with a signal until ctx (the scheduler's)
// is done. It returns nil, and the plugin never skips for want of windows,
// when h offers no node informer.
func newNodeSignals(ctx context.Context, h fwk.Handle, sources *window.Sources) *nodeSignals {
	if h == nil || h.SharedInformerFactory() == nil {
		return nil
	}
	logger := klog.FromContext(ctx)
	informer := h.SharedInformerFactory().Core().V1().Nodes().Informer()
	s := &nodeSignals{sources: sources, nodes: map[string]struct{}{}, done: make(chan struct{})}
	reg, err := informer.AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.observe(obj, true) },
		UpdateFunc: func(_, obj any) { s.observe(obj, true) },
		DeleteFunc: func(obj any) { s.observe(obj, false) },
	}, cache.HandlerOptions{Logger: &logger})
	if err != nil {
		logger.Error(err, "Cannot watch nodes: Filter and Score run in every cycle", "plugin", Name)
		return nil
	}
	s.reg = reg
	context.AfterFunc(ctx, func() {
		defer close(s.done)
		if err := informer.RemoveEventHandler(reg); err != nil {
			logger.V(4).Info("Removing the node event handler", "plugin", Name, "err", err)
		}
	})
	return s
}

// observe records a node added or updated (present true) or deleted.
func (s *nodeSignals) observe(obj any, present bool) {
	name := ""
	switch o := obj.(type) {
	case *v1.Node:
		name = o.Name
		present = present && s.sources.Carries(o)
	case cache.DeletedFinalStateUnknown:
		// A node's key is its name: nodes have no namespace.
		name = o.Key
	default:
		return
	}
	s.set(name, present)
}

func (s *nodeSignals) set(name string, present bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if present {
		s.nodes[name] = struct{}{}
	} else {
		delete(s.nodes, name)
	}
	s.count.Store(int64(len(s.nodes)))
}

// none reports whether no node is known to carry a signal. It is false on
// a nil s (no informer) and until the initial list has been handled.
func (s *nodeSignals) none() bool {
	if s == nil {
		return false
	}
	if !s.synced.Load() {
		if !s.reg.HasSynced() {
			return false
		}
		s.synced.Store(true)
	}
	return s.count.Load() == 0
}
