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

package settle

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// A cache lags behind the writes its caller just made: an object created
// a moment ago is not in it yet (and would look deleted, so settled), one
// just scaled still shows its old spec and status (settled, with the old
// replicas), one just deleted is still there. So a Wait reads each target
// the caller may have written (all of them, unless WaitWritten says which)
// once from the API server (its metadata: a GET, not a list) and judges
// it only once its cache has caught up with that read.

// knownBarriers returns a barrier for each target: caught up for a target
// an earlier Wait saw settled and that is not in written, unread (to be
// read) for the others.
func (w *Watcher) knownBarriers(targets, written []workload.Target) []barrier {
	bars := make([]barrier, len(targets))
	wrote := make(map[workload.Target]struct{}, len(written))
	for _, t := range written {
		wrote[t] = struct{}{}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, t := range targets {
		_, again := wrote[t]
		if _, ok := w.settled[t]; ok && !again {
			bars[i] = barrier{read: true, exists: true, caughtUp: true}
		}
	}
	return bars
}

// remember notes that a Wait saw targets settled.
func (w *Watcher) remember(targets []workload.Target) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.settled == nil {
		w.settled = map[workload.Target]struct{}{}
	}
	for _, t := range targets {
		w.settled[t] = struct{}{}
	}
}

// barrier is what the API server said of a target when a Wait began.
type barrier struct {
	// read is false until the read succeeded; err is its last failure.
	read bool
	err  error
	// exists with the target's UID, at resourceVersion.
	exists          bool
	resourceVersion string
	// caughtUp: the cache has shown that state or a later one.
	caughtUp bool
}

// readBarriers reads the targets whose barrier is not read yet, a few at
// a time: each read waits on a round trip more than on the server.
func (w *Watcher) readBarriers(ctx context.Context, targets []workload.Target, bars []barrier) {
	var g errgroup.Group
	g.SetLimit(w.readers)
	for i, t := range targets {
		if bars[i].read {
			continue
		}
		g.Go(func() error {
			var m *metav1.PartialObjectMetadata
			var err error
			if t.Namespace == "" {
				m, err = w.metaClient.Resource(t.Resource).Get(ctx, t.Name, metav1.GetOptions{})
			} else {
				m, err = w.metaClient.Resource(t.Resource).Namespace(t.Namespace).Get(ctx, t.Name, metav1.GetOptions{})
			}
			switch {
			case apierrors.IsNotFound(err):
				bars[i] = barrier{read: true}
			case err != nil:
				bars[i].err = err
			default:
				bars[i] = barrier{read: true, exists: m.UID == t.UID, resourceVersion: m.ResourceVersion}
			}
			return nil
		})
	}
	_ = g.Wait() // each failure is kept in its barrier
}

// catchUp reports whether the target's cache has caught up with b, and
// remembers it. obj is the target as the cache held it (nil when not there
// with the target's UID); storeRV is the cache's last resource version,
// read before obj: an event landing between the two reads would otherwise
// vouch for an object older than it.
func (b *barrier) catchUp(storeRV string, obj runtime.Object) bool {
	switch {
	case b.caughtUp:
	case !b.read:
		return false
	case !b.exists:
		// Gone from the API server: gone from the cache too.
		b.caughtUp = obj == nil
	default:
		// The object at that version or later, or any later event of
		// its resource (its deletion, say).
		if m, err := meta.Accessor(obj); obj != nil && err == nil && atLeast(m.GetResourceVersion(), b.resourceVersion) {
			b.caughtUp = true
		} else {
			b.caughtUp = atLeast(storeRV, b.resourceVersion)
		}
	}
	return b.caughtUp
}

// wants says why a target's cache is not judged yet.
func (b *barrier) wants() string {
	if !b.read {
		return fmt.Sprintf("a read from the API server: %v", b.err)
	}
	return "its watch to catch up with the API server"
}

// atLeast compares resource versions; one that is not a number is at
// least another only when they are equal.
func atLeast(rv, than string) bool {
	c, err := resourceversion.CompareResourceVersion(rv, than)
	if err != nil {
		return rv == than
	}
	return c >= 0
}
