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
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/controller"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/source"
	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

// A scenario with licenses runs the license driver's controller in-process
// against licenseServer, the scenario's license server: the controller
// creates the features' DeviceClasses and publishes their seats, as it
// would on a cluster, and steps change what is checked out outside it.

// driverStartTimeout bounds the wait for the controller to publish every
// feature's pool.
const driverStartTimeout = time.Minute

// outsideHost is the host the license server lists the outside checkouts
// from. The driver counts a checkout from a host named as a pod that holds
// a seat (in any letter case) as that pod's; a pod's name is a DNS
// subdomain, which has no '_', so this one is nobody's: every seat checked
// out from it is in use elsewhere, as a desktop's.
const outsideHost = "desktops_elsewhere"

// licenseServer is a source.Source serving the scenario's features: the
// seats each issued and the seats checked out outside the cluster.
type licenseServer struct {
	mu sync.Mutex
	// features by name: Total issued, InUse outside the cluster.
	features map[string]source.Feature
	// reads counts the calls of Read.
	reads int
}

var _ source.Source = &licenseServer{}

func newLicenseServer(l *scenario.Licenses) *licenseServer {
	s := &licenseServer{features: make(map[string]source.Feature, len(l.Features))}
	for _, f := range l.Features {
		s.features[f.Name] = source.Feature{Total: int(ptr.Deref(f.Seats, 0)), InUse: int(ptr.Deref(f.CheckedOutElsewhere, 0))}
	}
	return s
}

// Read reports every feature, its outside checkouts listed from
// outsideHost. A read that starts after checkOut returned sees its change.
func (s *licenseServer) Read(context.Context) (source.Reading, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	r := source.Reading{Features: make(map[string]source.Feature, len(s.features)), Time: time.Now()}
	for name, f := range s.features {
		if f.InUse > 0 {
			f.Checkouts = []source.Checkout{{User: "desktop", Host: outsideHost, Count: f.InUse}}
		}
		r.Features[name] = f
	}
	return r, nil
}

// checkOut sets the seats of feature checked out outside the cluster and
// returns how many reads there were before the change.
func (s *licenseServer) checkOut(feature string, n int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.features[feature]
	if !ok {
		return 0, fmt.Errorf("no license feature %q", feature)
	}
	f.InUse = n
	s.features[feature] = f
	return s.reads, nil
}

// feature is a feature's seats issued (Total) and checked out elsewhere
// (InUse) now.
func (s *licenseServer) feature(name string) (source.Feature, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.features[name]
	return f, ok
}

// waitPublished waits until the controller has published what it read after
// a change made when the server had been read `before` times. Its loop
// reads, then hands the plan to its ResourceSlice publisher, then waits for
// the next poll: the second read after the change starts once the plan of
// the first was handed over, and the publisher writes it at once (it has
// had a poll interval to).
func (s *licenseServer) waitPublished(ctx context.Context, before int) error {
	return wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.reads >= before+2, nil
	})
}

// licenseDriver is the driver's controller running in-process.
type licenseDriver struct {
	ctx      context.Context
	cancel   context.CancelFunc
	finished chan struct{}
	// err is what controller.Run returned, once finished is closed.
	err error
}

// startLicenseDriver runs the controller with conf against server and
// waits until it has published every feature's pool.
func startLicenseDriver(ctx context.Context, cfg *rest.Config, conf *config.Configuration, server *licenseServer, progress io.Writer) (*licenseDriver, error) {
	fmt.Fprintf(progress, "starting the license driver's controller (%d feature(s), read every %v)\n", len(conf.Features), conf.PollInterval.Duration)
	if !kubeversion.Has(kubeversion.DRAExtendedResource) {
		// Its DeviceClasses map no extended resource: a pod asking for a
		// seat in resources.limits would wait, "Insufficient", for good.
		fmt.Fprintf(progress, "license seats go only to pods with a ResourceClaim of the feature's DeviceClass, not to resources.limits: %v\n", kubeversion.Unavailable(kubeversion.DRAExtendedResource))
	}
	// A client of its own: its requests do not queue behind the
	// playground's own in the client's rate limiter.
	client, err := kubernetes.NewForConfig(rest.CopyConfig(cfg))
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(klog.NewContext(ctx, klog.LoggerWithName(klog.FromContext(ctx), "license-driver")))
	d := &licenseDriver{ctx: runCtx, cancel: cancel, finished: make(chan struct{})}
	go func() {
		defer close(d.finished)
		d.err = controller.Run(runCtx, controller.Options{Client: client, Config: conf, Source: server})
	}()
	missing := sets.New[string]()
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, driverStartTimeout, true, func(ctx context.Context) (bool, error) {
		if err := d.Err(); err != nil {
			return false, err
		}
		slices, err := client.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil // retried until the timeout
		}
		published := sets.New[string]()
		for _, s := range slices.Items {
			if s.Spec.Driver == licensedriver.DriverName {
				published.Insert(s.Spec.Pool.Name)
			}
		}
		missing = sets.New[string]()
		for _, f := range conf.Features {
			if !published.Has(f.Pool) {
				missing.Insert(f.Pool)
			}
		}
		return missing.Len() == 0, nil
	})
	if err != nil {
		d.Stop()
		return nil, fmt.Errorf("waiting for the license driver to publish pool(s) %s (its errors are in the log, logger=license-driver): %w",
			strings.Join(sets.List(missing), ", "), err)
	}
	return d, nil
}

// Err says why the controller stopped: nil while it runs, and once its
// context ended (Stop, or the run's).
func (d *licenseDriver) Err() error {
	select {
	case <-d.finished:
		switch {
		case d.ctx.Err() != nil:
			return nil
		case d.err == nil:
			return fmt.Errorf("the license driver's controller stopped")
		default:
			return fmt.Errorf("the license driver's controller stopped: %w", d.err)
		}
	default:
		return nil
	}
}

// Stop stops the controller and waits until it returned.
func (d *licenseDriver) Stop() {
	d.cancel()
	<-d.finished
}

// checkOut runs a licenses step: the server's outside checkouts change, the
// step lasts until the driver published that (settle then waits until the
// scheduler has tried every pod it may now seat).
func (p *pipeline) checkOut(ctx context.Context, st scenario.LicensesStep) error {
	if p.licenses == nil {
		return fmt.Errorf("the scenario has no licenses")
	}
	before, err := p.licenses.checkOut(st.Feature, int(ptr.Deref(st.CheckedOutElsewhere, 0)))
	if err != nil {
		return err
	}
	if err := p.licenses.waitPublished(ctx, before); err != nil {
		return fmt.Errorf("waiting for the license driver to read the change: %w", err)
	}
	return nil
}
