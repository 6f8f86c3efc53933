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

package apply

import (
	"context"
	"fmt"
	"io"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
)

// nodeSequentialMax: up to that many nodes are created one by one, in
// order, as a small scenario always had them; more are created with
// boundWorkers requests in flight.
const nodeSequentialMax = 100

// CreateNodes creates nodes with their status as given (a status set by a
// second request could come after KWOK's first one, which takes capacity and
// allocatable from the node as it sees it). Up to 100 nodes are created one
// by one in order; more in parallel, after the progress line "creating N nodes".
// The first error is returned, naming the node; the creations not started by
// then are skipped.
func CreateNodes(ctx context.Context, client kubernetes.Interface, nodes []*corev1.Node, progress io.Writer) error {
	logger := klog.FromContext(ctx)
	create := func(ctx context.Context, node *corev1.Node) error {
		if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating node %s: %w", node.Name, err)
		}
		logger.V(4).Info("Created node", "node", klog.KObj(node))
		return nil
	}
	if len(nodes) <= nodeSequentialMax {
		for _, node := range nodes {
			if err := create(ctx, node); err != nil {
				return err
			}
		}
		return nil
	}
	nodeProgress(progress, "creating %d nodes\n", len(nodes))
	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(boundWorkers)
	for _, node := range nodes {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error { return create(gctx, node) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	logger.V(2).Info("Created nodes", "count", len(nodes), "duration", time.Since(start))
	return nil
}

// nodeProgress writes a progress line when progress is not nil.
func nodeProgress(progress io.Writer, format string, args ...any) {
	if progress != nil {
		_, _ = fmt.Fprintf(progress, format, args...)
	}
}
