//go:build kube1.36

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

package node

import (
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver"
	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

// This file bridges the kubelet plugin helper's device health service
// (HealthService, DeviceHealthReport) and RollingUpdateRegistrarSocketFile,
// which exist since 1.37 (kubeversion.DeviceHealth), and DefaultCDIDir,
// which exists since 1.36.

// defaultCDIDir is the helper's default CDI spec directory.
const defaultCDIDir = kubeletplugin.DefaultCDIDir

// noHealthService: the 1.36 helper serves device health only for a driver
// that implements its gRPC service, which this one does not.
func noHealthService(logger klog.Logger) []kubeletplugin.Option {
	logger.Info("No device health service", "reason", kubeversion.Unavailable(kubeversion.DeviceHealth).Error())
	return nil
}

// rollingUpdateRegistrarSocket is the registrar socket's file name with
// rolling updates for the pod podUID, as the 1.36 helper names it.
func rollingUpdateRegistrarSocket(_ string, podUID types.UID) string {
	return licensedriver.DriverName + "-" + string(podUID) + "-reg.sock"
}
