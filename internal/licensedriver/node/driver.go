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
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
)

// driver implements kubeletplugin.DRAPlugin. It keeps no state between
// calls: a claim's CDI spec file is named after the claim's UID, so an
// unprepare needs nothing but the UID, also after a restart or from the
// other instance of a rolling update.
type driver struct {
	specs    specDir
	features map[string]*config.Feature // by pool
	pools    string                     // the known pools, for errors
	// fatal ends Run with err: the plugin's gRPC servers failed.
	fatal func(err error)
}

var _ kubeletplugin.DRAPlugin = (*driver)(nil)

func newDriver(c *config.Configuration, cdiDir string, fatal func(error)) *driver {
	d := &driver{specs: specDir(cdiDir), features: make(map[string]*config.Feature, len(c.Features)), fatal: fatal}
	pools := make([]string, 0, len(c.Features))
	for i := range c.Features {
		f := &c.Features[i]
		d.features[f.Pool] = f
		pools = append(pools, f.Pool)
	}
	slices.Sort(pools)
	d.pools = strings.Join(pools, ", ")
	return d
}

// PrepareResourceClaims writes one CDI spec per claim. A claim that cannot
// be prepared gets its own error; the others are still prepared.
func (d *driver) PrepareResourceClaims(ctx context.Context, claims []*resourceapi.ResourceClaim) (map[types.UID]kubeletplugin.PrepareResult, error) {
	logger := klog.FromContext(ctx)
	result := make(map[types.UID]kubeletplugin.PrepareResult, len(claims))
	for _, claim := range claims {
		r := d.prepareClaim(claim)
		if r.Err != nil {
			logger.Error(r.Err, "Preparing the claim failed", "claim", klog.KObj(claim))
		} else {
			logger.V(4).Info("Prepared the claim", "claim", klog.KObj(claim), "devices", len(r.Devices))
		}
		result[claim.UID] = r
	}
	return result, nil
}

func (d *driver) prepareClaim(claim *resourceapi.ResourceClaim) kubeletplugin.PrepareResult {
	fail := func(err error) kubeletplugin.PrepareResult {
		return kubeletplugin.PrepareResult{Err: fmt.Errorf("claim %s: %w", klog.KObj(claim), err)}
	}
	if err := validateClaimUID(claim.UID); err != nil {
		return fail(err)
	}
	if claim.Status.Allocation == nil {
		return fail(errors.New("not allocated"))
	}
	env := map[string]string{}
	setBy := map[string]string{} // variable -> the pool that set it
	var devices []kubeletplugin.Device
	for i, r := range claim.Status.Allocation.Devices.Results {
		if r.Driver != licensedriver.DriverName {
			continue
		}
		f := d.features[r.Pool]
		if f == nil {
			return fail(fmt.Errorf("status.allocation.devices.results[%d] (request %q, device %s): pool %q is not a license feature of this node's configuration (known pools: %s)",
				i, r.Request, r.Device, r.Pool, d.pools))
		}
		for _, k := range slices.Sorted(maps.Keys(f.Env)) {
			v := f.Env[k]
			if old, ok := env[k]; ok && old != v {
				return fail(fmt.Errorf("environment variable %s: pool %q sets %q, pool %q sets %q; one claim's seats must agree (ask for them in separate claims)",
					k, setBy[k], old, r.Pool, v))
			}
			env[k], setBy[k] = v, r.Pool
		}
		devices = append(devices, kubeletplugin.Device{
			Requests:   []string{r.Request},
			PoolName:   r.Pool,
			DeviceName: r.Device,
			ShareID:    r.ShareID,
		})
	}
	if len(env) == 0 {
		// CDI refuses a device without edits: no spec, no CDI device.
		// A spec left from an earlier configuration goes.
		if err := d.specs.remove(claim.UID); err != nil {
			return fail(err)
		}
		return kubeletplugin.PrepareResult{Devices: devices}
	}
	data, err := encodeSpec(buildSpec(claim.UID, env))
	if err != nil {
		return fail(err)
	}
	if err := d.specs.write(claim.UID, data); err != nil {
		return fail(err)
	}
	// The kubelet hands a container the CDI devices of every device of the
	// requests it uses; one per request is enough to set the environment
	// (subrequests count as their request: the kubelet gets base names).
	id := CDIDeviceID(claim.UID)
	seen := map[string]bool{}
	for i := range devices {
		if req := resourceclaim.BaseRequestRef(devices[i].Requests[0]); !seen[req] {
			seen[req] = true
			devices[i].CDIDeviceIDs = []string{id}
		}
	}
	return kubeletplugin.PrepareResult{Devices: devices}
}

// UnprepareResourceClaims removes the claims' CDI spec files. A claim that
// was never prepared, or already unprepared, is not an error.
func (d *driver) UnprepareResourceClaims(ctx context.Context, claims []kubeletplugin.NamespacedObject) (map[types.UID]error, error) {
	logger := klog.FromContext(ctx)
	result := make(map[types.UID]error, len(claims))
	for _, claim := range claims {
		if err := validateClaimUID(claim.UID); err != nil {
			// No spec of ours can have that name: nothing to undo. An
			// error would only make the kubelet retry forever.
			logger.Info("Nothing to unprepare", "claim", claim, "reason", err.Error())
			result[claim.UID] = nil
			continue
		}
		err := d.specs.remove(claim.UID)
		if err != nil {
			err = fmt.Errorf("claim %s: %w", claim, err)
			logger.Error(err, "Unpreparing the claim failed")
		} else {
			logger.V(4).Info("Unprepared the claim", "claim", claim)
		}
		result[claim.UID] = err
	}
	return result, nil
}

// HandleError logs errors from the helper's background work. The node role
// publishes no ResourceSlices, so what arrives here are failures of the
// gRPC servers: those are not recoverable, and Run stops with them so that
// the DaemonSet restarts the pod.
func (d *driver) HandleError(ctx context.Context, err error, msg string) {
	utilruntime.HandleErrorWithContext(ctx, err, msg)
	if !errors.Is(err, kubeletplugin.ErrRecoverable) {
		d.fatal(fmt.Errorf("%s: %w", msg, err))
	}
}
