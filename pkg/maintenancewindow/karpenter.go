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

	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/nodeclaims"
	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/window"
)

// watchNodeClaims gives check Karpenter's NodeClaims, watched until ctx
// (the scheduler's) is done, when the args read them and the cluster
// serves them. It is asked once, when the plugin is built: a scheduler
// started before Karpenter's CRDs were installed reads no NodeClaims until
// it restarts, and says so.
func watchNodeClaims(ctx context.Context, h fwk.Handle, check *window.Checker, enabled bool) {
	if !enabled || h == nil || h.ClientSet() == nil || h.KubeConfig() == nil {
		return
	}
	logger := klog.FromContext(ctx)
	served, err := nodeclaims.Served(h.ClientSet().Discovery())
	if err != nil {
		logger.Error(err, "Cannot tell whether Karpenter's NodeClaims are served: the karpenter source is off", "plugin", Name)
		return
	}
	if !served {
		logger.V(2).Info("Karpenter's NodeClaims are not served: the karpenter source is off until the scheduler restarts", "plugin", Name)
		return
	}
	client, err := dynamic.NewForConfig(h.KubeConfig())
	if err != nil {
		logger.Error(err, "Cannot watch Karpenter's NodeClaims: the karpenter source is off", "plugin", Name)
		return
	}
	check.SetNodeClaims(nodeclaims.NewIndex(ctx, client))
	logger.V(2).Info("Reading Karpenter's NodeClaims", "plugin", Name)
}
