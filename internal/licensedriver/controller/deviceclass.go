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

package controller

import (
	"context"
	"fmt"

	resourceapi "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/seats"
	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

// ManagedByLabel marks the DeviceClasses the controller owns: it updates
// them to the configuration and deletes those of features no longer
// configured, and leaves every other DeviceClass alone.
const ManagedByLabel = "app.kubernetes.io/managed-by"

const managedBy = "license-driver." + licensedriver.DriverName

// DeviceClass is the class of a feature's seats: it selects the offered
// devices of the feature's pool and maps the feature's extended resource
// name to them, so that a pod asks with resources.limits alone. Every
// request names a class and cannot drop its selectors, so no claim, however
// it tolerates device taints, takes a seat the driver does not offer.
// Where the minor lacks DRA extended resources the class maps no name: its
// API server would drop the field, and pods must ask with ResourceClaims.
func DeviceClass(f config.Feature) *resourceapi.DeviceClass {
	class := &resourceapi.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:   f.DeviceClassName,
			Labels: map[string]string{ManagedByLabel: managedBy},
		},
		Spec: resourceapi.DeviceClassSpec{
			Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{
				Expression: fmt.Sprintf("device.driver == %q && device.attributes[%q].%s == %q && device.attributes[%q].%s",
					licensedriver.DriverName, licensedriver.DriverName, seats.PoolAttribute, f.Pool, licensedriver.DriverName, seats.OfferedAttribute),
			}}},
		},
	}
	if kubeversion.Has(kubeversion.DRAExtendedResource) {
		class.Spec.ExtendedResourceName = ptr.To(f.ResourceName)
	}
	return class
}

// syncDeviceClasses creates or updates the configured features' classes and
// deletes the managed classes of features no longer configured.
func syncDeviceClasses(ctx context.Context, client kubernetes.Interface, features []config.Feature) error {
	logger := klog.FromContext(ctx)
	classes := client.ResourceV1().DeviceClasses()
	want := map[string]bool{}
	for _, f := range features {
		desired := DeviceClass(f)
		want[desired.Name] = true
		current, err := classes.Get(ctx, desired.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			if _, err := classes.Create(ctx, desired, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create DeviceClass %s: %w", desired.Name, err)
			}
			logger.Info("Created DeviceClass", "deviceClass", klog.KObj(desired), "extendedResourceName", ptr.Deref(desired.Spec.ExtendedResourceName, ""))
		case err != nil:
			return fmt.Errorf("get DeviceClass %s: %w", desired.Name, err)
		case current.Labels[ManagedByLabel] != managedBy:
			return fmt.Errorf("DeviceClass %s exists and is not the license driver's (label %s=%s missing): rename the feature's deviceClassName or delete that class",
				desired.Name, ManagedByLabel, managedBy)
		case !apiequality.Semantic.DeepEqual(current.Spec, desired.Spec):
			current.Spec = desired.Spec
			if _, err := classes.Update(ctx, current, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("update DeviceClass %s: %w", desired.Name, err)
			}
			logger.Info("Updated DeviceClass", "deviceClass", klog.KObj(desired), "extendedResourceName", ptr.Deref(desired.Spec.ExtendedResourceName, ""))
		}
	}
	list, err := classes.List(ctx, metav1.ListOptions{LabelSelector: ManagedByLabel + "=" + managedBy})
	if err != nil {
		return fmt.Errorf("list DeviceClasses: %w", err)
	}
	for i := range list.Items {
		name := list.Items[i].Name
		if want[name] {
			continue
		}
		if err := classes.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete DeviceClass %s: %w", name, err)
		}
		logger.Info("Deleted the DeviceClass of a feature no longer configured", "deviceClass", klog.KRef("", name))
	}
	return nil
}
