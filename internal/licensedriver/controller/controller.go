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

// Package controller is the license driver's controller role: it keeps one
// DeviceClass per configured feature, reads the license server every poll
// interval, follows the ResourceClaims that hold the driver's devices, and
// publishes each feature's pool (package seats) with the standard
// ResourceSlice publisher. It holds no state the API server does not: a
// restarted or newly elected controller rebuilds everything from the claims
// and the next reading.
package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/seats"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/source"
	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

// Options configure Run.
type Options struct {
	Client kubernetes.Interface
	Config *config.Configuration
	Source source.Source
	// Clock defaults to the real clock.
	Clock clock.WithTicker
	// Recorder, when set, gets events on the features' DeviceClasses when
	// the source fails, goes stale and recovers.
	Recorder record.EventRecorder
}

// Events' reasons.
const (
	ReasonSourceFailed    = "LicenseSourceFailed"
	ReasonSourceStale     = "LicenseSourceStale"
	ReasonSourceRecovered = "LicenseSourceRecovered"
	ReasonNotReported     = "LicenseFeatureNotReported"
	ReasonOverLimit       = "LicenseFeatureOverLimit"
	ReasonWithinLimit     = "LicenseFeatureWithinLimit"
	ReasonHeldTwice       = "LicenseSeatHeldTwice"
)

type controller struct {
	Options
	claims *allocations
	dirty  chan struct{}

	mu      sync.Mutex
	last    *source.Reading // last successful reading
	lastOK  time.Time
	failing bool // the last read failed
	stale   bool
	missing map[string]bool // features the last reading did not report

	// Touched only by resources, on Run's goroutine.
	overLimit map[string]bool // pools whose reported total is over maxSeats
	heldTwice map[string]bool // pools with a device held by two claims
}

func newController(o Options) *controller {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return &controller{
		Options:   o,
		claims:    newAllocations(o.Clock.Now),
		dirty:     make(chan struct{}, 1),
		missing:   map[string]bool{},
		overLimit: map[string]bool{},
		heldTwice: map[string]bool{},
	}
}

// Run runs the controller until ctx is done.
func Run(ctx context.Context, o Options) error {
	if o.Config.Devices == config.Shared && !kubeversion.Has(kubeversion.DRAConsumableCapacity) {
		return fmt.Errorf("devices: Shared: %w; use devices: PerSeat", kubeversion.Unavailable(kubeversion.DRAConsumableCapacity))
	}
	RegisterMetrics()
	logger := klog.FromContext(ctx)
	c := newController(o)
	if !kubeversion.Has(kubeversion.DRAExtendedResource) {
		logger.Info("DeviceClasses map no extended resource name: pods must ask for seats with ResourceClaims",
			"reason", kubeversion.Unavailable(kubeversion.DRAExtendedResource).Error())
	}
	if err := syncDeviceClasses(ctx, o.Client, o.Config.Features); err != nil {
		return err
	}

	factory := informers.NewSharedInformerFactory(o.Client, 0)
	claims := factory.Resource().V1().ResourceClaims().Informer()
	if _, err := claims.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.claimChanged(obj) },
		UpdateFunc: func(_, obj any) { c.claimChanged(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if claim, ok := obj.(*resourceapi.ResourceClaim); ok {
				c.claims.remove(claim.UID)
				c.kick()
			}
		},
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), claims.HasSynced) {
		return fmt.Errorf("ResourceClaim informer did not sync: %w", context.Cause(ctx))
	}

	c.read(ctx)
	publisher, err := resourceslice.StartController(ctx, resourceslice.Options{
		DriverName: licensedriver.DriverName,
		KubeClient: o.Client,
		Resources:  c.resources(ctx),
		ErrorHandler: func(ctx context.Context, err error, msg string) {
			klog.FromContext(ctx).Error(err, "Publishing ResourceSlices", "detail", msg)
		},
	})
	if err != nil {
		return fmt.Errorf("start the ResourceSlice publisher: %w", err)
	}
	defer publisher.Stop()
	logger.Info("License driver controller started", "features", len(o.Config.Features), "pollInterval", o.Config.PollInterval.Duration)

	ticker := c.Clock.NewTicker(c.Config.PollInterval.Duration)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C():
			c.read(ctx)
		case <-c.dirty:
		}
		publisher.Update(c.resources(ctx))
	}
}

func (c *controller) claimChanged(obj any) {
	if claim, ok := obj.(*resourceapi.ResourceClaim); ok {
		c.claims.set(claim)
		c.kick()
	}
}

// kick asks for a new plan; kicks coalesce while one is pending.
func (c *controller) kick() {
	select {
	case c.dirty <- struct{}{}:
	default:
	}
}

// read reads the source once and records the outcome.
func (c *controller) read(ctx context.Context) {
	logger := klog.FromContext(ctx)
	r, err := c.Source.Read(ctx)
	now := c.Clock.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		sourceReads.WithLabelValues("error").Inc()
		logger.Error(err, "Reading the license server failed; keeping the last reading", "lastSuccess", c.lastOK)
		if !c.failing {
			c.event(corev1.EventTypeWarning, ReasonSourceFailed, "Reading the license server failed: %v", err)
		}
		c.failing = true
	} else {
		sourceReads.WithLabelValues("success").Inc()
		sourceLastSuccess.Set(float64(now.Unix()))
		if c.failing || c.stale {
			logger.Info("The license server answers again")
			c.event(corev1.EventTypeNormal, ReasonSourceRecovered, "The license server answers again")
		}
		c.last, c.lastOK, c.failing = &r, now, false
		for _, f := range c.Config.Features {
			_, ok := r.Features[f.Name]
			if !ok && !c.missing[f.Name] {
				why := "does not report it"
				if reason, named := r.Unavailable[f.Name]; named {
					why = "gives no count for it: " + reason
				}
				logger.Info("The license server does not count a configured feature: its seats are not offered", "feature", f.Name, "reason", why)
				c.featureEvent(f, corev1.EventTypeWarning, ReasonNotReported, "No seat of feature %q is offered: the license server %s", f.Name, why)
			}
			c.missing[f.Name] = !ok
		}
	}
	stale := c.last == nil || now.Sub(c.lastOK) > c.Config.StaleAfter.Duration
	if stale && !c.stale {
		logger.Info("The license server's last reading is stale", "lastSuccess", c.lastOK, "onStale", c.Config.OnStale)
		if c.last == nil {
			c.event(corev1.EventTypeWarning, ReasonSourceStale, "The license server has not answered since the driver started; onStale is %s", c.Config.OnStale)
		} else {
			c.event(corev1.EventTypeWarning, ReasonSourceStale, "No answer from the license server for over %s; onStale is %s", c.Config.StaleAfter.Duration, c.Config.OnStale)
		}
	}
	c.stale = stale
	if stale {
		sourceStale.Set(1)
	} else {
		sourceStale.Set(0)
	}
}

// resources plans every feature's pool from the last reading and the
// claims.
func (c *controller) resources(ctx context.Context) *resourceslice.DriverResources {
	c.mu.Lock()
	last, stale := c.last, c.stale
	c.mu.Unlock()
	closed := stale && c.Config.OnStale == config.FailClosed
	claims := c.claims.snapshot()
	now := c.Clock.Now()
	out := &resourceslice.DriverResources{Pools: map[string]resourceslice.Pool{}}
	for _, f := range c.Config.Features {
		p := seats.Pool{Name: f.Pool, Feature: f.Name, Held: claims.holds[f.Pool]}
		reported, over := 0, false
		if last != nil && !closed {
			r, ok := last.Features[f.Name]
			reported = r.Total
			if f.Seats != nil && int(*f.Seats) < reported {
				reported = int(*f.Seats)
			}
			over = ok && reported > int(c.Config.MaxSeats)
			switch {
			case !ok:
				p.Why = seats.NotReported
			case over:
				p.Why = seats.OverLimit
			default:
				p.Known, p.Total, p.InUse = true, reported, r.InUse
				if len(r.Checkouts) > 0 {
					p.ClusterCheckouts = ptr.To(clusterCheckouts(r.Checkouts, claims.claims[f.Pool]))
				}
			}
		}
		c.checkLimit(ctx, f, over, reported)
		c.checkHeldTwice(ctx, f, claims.doubles[f.Pool])
		compute := seats.ComputeShared
		if c.Config.Devices == config.PerSeat {
			compute = seats.Compute
		}
		plan := compute(p, now, c.Config.SettleWindow.Duration)
		klog.FromContext(ctx).V(4).Info("Planned pool", "pool", f.Pool, "plan", plan.String())
		seatsGauge.WithLabelValues(f.Pool, "total").Set(float64(p.Total))
		seatsGauge.WithLabelValues(f.Pool, "allocated").Set(float64(plan.Allocated))
		seatsGauge.WithLabelValues(f.Pool, "external").Set(float64(plan.External))
		seatsGauge.WithLabelValues(f.Pool, "free").Set(float64(plan.Free))
		seatsGauge.WithLabelValues(f.Pool, "blocked").Set(float64(plan.Blocked))
		out.Pools[f.Pool] = allNodesPool(seats.Slices(plan.Devices))
	}
	return out
}

func (c *controller) event(eventType, reason, format string, args ...any) {
	for _, f := range c.Config.Features {
		c.featureEvent(f, eventType, reason, format, args...)
	}
}

func (c *controller) featureEvent(f config.Feature, eventType, reason, format string, args ...any) {
	if c.Recorder == nil {
		return
	}
	c.Recorder.Eventf(DeviceClass(f), eventType, reason, format, args...)
}
