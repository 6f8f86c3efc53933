//go:build !kube1.36 && !kube1.35

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
	"context"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver"
)

// This file bridges the kubelet plugin helper's device health service
// (HealthService, DeviceHealthReport) and RollingUpdateRegistrarSocketFile,
// which exist since 1.37 (kubeversion.DeviceHealth), and DefaultCDIDir,
// which exists since 1.36.

// defaultCDIDir is the helper's default CDI spec directory.
const defaultCDIDir = kubeletplugin.DefaultCDIDir

// noHealthService turns the device health service off.
func noHealthService(klog.Logger) []kubeletplugin.Option {
	return []kubeletplugin.Option{kubeletplugin.HealthService(false)}
}

// WatchHealthStatus: a license seat has no health on the node. Run turns
// the health service off, so this is only a fallback.
func (d *driver) WatchHealthStatus(context.Context, chan<- kubeletplugin.DeviceHealthReport) error {
	return kubeletplugin.ErrHealthNotSupported
}

// rollingUpdateRegistrarSocket is the registrar socket's file name in dir
// with rolling updates for the pod podUID.
func rollingUpdateRegistrarSocket(dir string, podUID types.UID) string {
	return kubeletplugin.RollingUpdateRegistrarSocketFile(dir, licensedriver.DriverName, podUID)
}
