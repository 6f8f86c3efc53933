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

package podcount

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// ObservePod applies a pod's state as an informer reports it. counted says
// whether the pod matches what the plugin counts.
func (c *Cache) ObservePod(pod *v1.Pod, counted bool) {
	switch {
	case !counted || pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed:
		// A pod that ended or stopped matching leaves, wherever it was recorded.
		c.Forget(pod.UID)
	case pod.Spec.NodeName != "":
		c.Bind(pod.UID, pod.Spec.NodeName)
	}
	// A counted pod that is not bound yet is left as it is: only Reserve
	// records it, and Unreserve, deletion or its binding settle it.
}

// PodEventHandler returns the handler to add to a pod informer. counts
// decides which pods are counted.
func (c *Cache) PodEventHandler(counts func(*v1.Pod) bool) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) {
			if pod, ok := obj.(*v1.Pod); ok {
				c.ObservePod(pod, counts(pod))
			}
		},
		UpdateFunc: func(_, newObj interface{}) {
			if pod, ok := newObj.(*v1.Pod); ok {
				c.ObservePod(pod, counts(pod))
			}
		},
		DeleteFunc: func(obj interface{}) {
			if pod, ok := deletedObject[*v1.Pod](obj); ok {
				c.Forget(pod.UID)
			}
		},
	}
}

// NodeEventHandler returns the handler to add to a node informer: a deleted
// node takes its bindings and reservations with it.
func (c *Cache) NodeEventHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj interface{}) {
			if node, ok := deletedObject[*v1.Node](obj); ok {
				c.ForgetNode(node.Name)
			}
		},
	}
}

// deletedObject unwraps the tombstone an informer hands over when it missed
// the deletion itself.
func deletedObject[T any](obj interface{}) (T, bool) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	t, ok := obj.(T)
	return t, ok
}
