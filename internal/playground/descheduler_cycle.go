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
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
)

// cycleTimeout bounds one run of the descheduler: upstream's run-once mode
// retries a failed cycle at once, forever.
const cycleTimeout = 2 * time.Minute

// evictionReason is the reason of the DisruptionTarget condition the API
// server sets on a pod it evicts through the Eviction API, before it
// deletes it.
const evictionReason = "EvictionByEvictionAPI"

// descheduler is a run's descheduler: its binary, the policy as it reads
// it and its log, which every cycle appends to.
type descheduler struct {
	binary, source, policy, kubeconfig, log string
}

// cycle runs the descheduler once, in upstream's run-once mode: it
// evicts what its strategies pick, then exits. No metrics server: two
// runs at once would want the same port.
func (d *descheduler) cycle(ctx context.Context, n int) error {
	f, err := os.OpenFile(d.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	fmt.Fprintf(f, "--- cycle %d\n", n)
	cctx, cancel := context.WithTimeout(ctx, cycleTimeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, d.binary,
		"--policy-config-file", d.policy,
		"--kubeconfig", d.kubeconfig,
		"--descheduling-interval", "0",
		"--secure-port", "0",
		"--v", "2")
	cmd.Stdout, cmd.Stderr = f, f
	setParentDeathSignal(cmd)
	start := time.Now()
	err = cmd.Run()
	klog.FromContext(ctx).V(2).Info("Ran the descheduler", "cycle", n, "duration", time.Since(start), "err", err)
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case cctx.Err() != nil:
		return fmt.Errorf("the descheduler's cycle did not end within %v (policy %s); the end of %s:\n%s", cycleTimeout, d.source, d.log, logTail(d.log))
	case err != nil:
		return fmt.Errorf("the descheduler failed (%v) with policy %s; the end of %s:\n%s", err, d.source, d.log, logTail(d.log))
	}
	return nil
}

// logTail is the last lines of the log at path.
func logTail(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-10):], "\n")
}

// evictions counts the pods the Eviction API evicts while it watches,
// by UID: the DisruptionTarget condition the API server sets first.
type evictions struct {
	w    interface{ Stop() }
	done chan struct{}
	mu   sync.Mutex
	uids sets.Set[types.UID]
}

// watchEvictions starts counting the evictions from now on.
func watchEvictions(ctx context.Context, client kubernetes.Interface) (*evictions, error) {
	list, err := client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	w, err := client.CoreV1().Pods(metav1.NamespaceAll).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		return nil, fmt.Errorf("watching pods: %w", err)
	}
	e := &evictions{w: w, done: make(chan struct{}), uids: sets.New[types.UID]()}
	go func() {
		defer close(e.done)
		for ev := range w.ResultChan() {
			if pod, ok := ev.Object.(*corev1.Pod); ok && evicted(pod) {
				e.mu.Lock()
				e.uids.Insert(pod.UID)
				e.mu.Unlock()
			}
		}
	}()
	return e, nil
}

// stop stops the watch and returns how many pods were evicted.
func (e *evictions) stop() int {
	e.w.Stop()
	<-e.done
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.uids.Len()
}

// evicted reports whether the Eviction API evicted pod.
func evicted(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && c.Reason == evictionReason {
			return true
		}
	}
	return false
}
