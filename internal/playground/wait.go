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
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Bound reports whether pod has a node.
func Bound(pod *corev1.Pod) bool { return pod.Spec.NodeName != "" }

// Unschedulable reports whether the scheduler found no node for pod: its
// PodScheduled condition is False with reason Unschedulable.
func Unschedulable(pod *corev1.Pod) bool {
	c := scheduledCondition(pod)
	return c != nil && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable
}

func scheduledCondition(pod *corev1.Pod) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == corev1.PodScheduled {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// Wait waits until every object of refs is settled, writing progress lines
// ("scheduled 5/7 pods") to a.Progress. It returns ctx's error, with the
// objects still waited for, when ctx ends first, and a.Alive's error as
// soon as it has one.
func (a *Applier) Wait(ctx context.Context, refs []Ref) error {
	return a.wait(ctx, refs, a.Progress)
}

func (a *Applier) wait(ctx context.Context, refs []Ref, progress io.Writer) error {
	interval := a.PollInterval
	if interval == 0 {
		interval = 100 * time.Millisecond
	}
	if a.replicaSets == nil {
		a.replicaSets = map[types.UID]sets.Set[types.UID]{}
	}
	var pending []string
	var lastErr error
	err := wait.PollUntilContextCancel(ctx, interval, true, func(ctx context.Context) (bool, error) {
		if a.Alive != nil {
			if err := a.Alive(); err != nil {
				return false, err
			}
		}
		o, err := observe(ctx, a.Client, refs, a.replicaSets)
		if err != nil {
			lastErr = err
			return false, nil // retried until ctx ends
		}
		total, bound, unschedulable := 0, 0, 0
		pending = pending[:0]
		for _, r := range refs {
			st := o.state(r)
			for _, p := range st.Pods {
				total++
				switch {
				case Bound(p):
					bound++
				case Unschedulable(p):
					unschedulable++
				}
			}
			if !st.Settled {
				pending = append(pending, fmt.Sprintf("%s (wants %s)", r, st.Wants))
			}
		}
		line := fmt.Sprintf("scheduled %d/%d pods", bound, total)
		if unschedulable > 0 {
			line += fmt.Sprintf(", %d unschedulable", unschedulable)
		}
		if progress != nil && line != a.lastProgress && total > 0 {
			fmt.Fprintln(progress, line)
		}
		a.lastProgress = line
		return len(pending) == 0, nil
	})
	if err != nil {
		if len(pending) == 0 && lastErr != nil {
			pending = append(pending, lastErr.Error())
		}
		return fmt.Errorf("waiting for the controllers and the scheduler (%s; not settled: %s): %w", a.lastProgress, strings.Join(pending, ", "), err)
	}
	return nil
}
