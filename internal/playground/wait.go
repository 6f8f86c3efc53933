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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// Wait waits until every pod is bound or unschedulable, writing progress
// lines ("scheduled 5/7 pods") to a.Progress. It returns ctx's error, with
// the pods still pending, when ctx ends first.
func (a *Applier) Wait(ctx context.Context, pods []types.NamespacedName) error {
	return a.wait(ctx, pods, a.Progress)
}

func (a *Applier) wait(ctx context.Context, pods []types.NamespacedName, progress io.Writer) error {
	interval := a.PollInterval
	if interval == 0 {
		interval = 100 * time.Millisecond
	}
	namespaces := sets.New[string]()
	for _, p := range pods {
		namespaces.Insert(p.Namespace)
	}
	last := ""
	var pending []string
	err := wait.PollUntilContextCancel(ctx, interval, true, func(ctx context.Context) (bool, error) {
		byName := map[types.NamespacedName]*corev1.Pod{}
		for _, ns := range sets.List(namespaces) {
			list, err := a.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, nil // retried until ctx ends
			}
			for i := range list.Items {
				p := &list.Items[i]
				byName[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}] = p
			}
		}
		bound, unschedulable := 0, 0
		pending = pending[:0]
		for _, ref := range pods {
			p := byName[ref]
			switch {
			case p != nil && Bound(p):
				bound++
			case p != nil && Unschedulable(p):
				unschedulable++
			default:
				pending = append(pending, ref.String())
			}
		}
		line := fmt.Sprintf("scheduled %d/%d pods", bound, len(pods))
		if unschedulable > 0 {
			line += fmt.Sprintf(", %d unschedulable", unschedulable)
		}
		if progress != nil && line != last {
			fmt.Fprintln(progress, line)
		}
		last = line
		return len(pending) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the scheduler (%s; pending: %s): %w", last, strings.Join(pending, ", "), err)
	}
	return nil
}
