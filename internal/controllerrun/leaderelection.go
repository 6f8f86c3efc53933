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

package controllerrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
)

// LeaderElection is the leader election of a controller's replicas on a
// Lease, as its --leader-elect* flags set it.
type LeaderElection struct {
	// Enabled: elect a leader; otherwise every replica runs its role.
	Enabled bool
	// Namespace of the Lease; empty: $POD_NAMESPACE, else kube-system.
	Namespace string
	// Name of the Lease, also the elector's name.
	Name          string
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
}

// AddFlags registers the --leader-elect* flags on fs, with
// defaultLeaseName as the default of --leader-elect-resource-name.
func (l *LeaderElection) AddFlags(fs *pflag.FlagSet, defaultLeaseName string) {
	fs.BoolVar(&l.Enabled, "leader-elect", true, "Elect a leader among the replicas with a Lease, so that one replica acts at a time.")
	fs.StringVar(&l.Namespace, "leader-elect-resource-namespace", "", "Namespace of the Lease; empty: the POD_NAMESPACE environment variable, else kube-system.")
	fs.StringVar(&l.Name, "leader-elect-resource-name", defaultLeaseName, "Name of the Lease.")
	fs.DurationVar(&l.LeaseDuration, "leader-elect-lease-duration", 15*time.Second, "How long a non-leader waits after the last renewal before taking over.")
	fs.DurationVar(&l.RenewDeadline, "leader-elect-renew-deadline", 10*time.Second, "How long the leader retries renewing before it gives up (and exits).")
	fs.DurationVar(&l.RetryPeriod, "leader-elect-retry-period", 2*time.Second, "How long to wait between tries to acquire or renew.")
}

// Check checks what client-go's elector requires of the durations (it
// panics otherwise), by the flags' names.
func (l *LeaderElection) Check() error {
	switch {
	case l.RetryPeriod <= 0:
		return fmt.Errorf("--leader-elect-retry-period (%s) must be positive", l.RetryPeriod)
	case l.LeaseDuration <= l.RenewDeadline:
		return fmt.Errorf("--leader-elect-lease-duration (%s) must be longer than --leader-elect-renew-deadline (%s)", l.LeaseDuration, l.RenewDeadline)
	case float64(l.RenewDeadline) <= leaderelection.JitterFactor*float64(l.RetryPeriod):
		return fmt.Errorf("--leader-elect-renew-deadline (%s) must be longer than %.1f times --leader-elect-retry-period (%s)", l.RenewDeadline, leaderelection.JitterFactor, l.RetryPeriod)
	}
	return nil
}

// Run runs run while this replica holds the Lease, whatever Enabled says
// (the caller runs run itself when it is off). Losing the Lease ends Run
// with an error, as kube-controller-manager does: the next leader starts
// from the API server's state. A role that returns, or ctx ending, releases
// the Lease; Run then returns the role's error.
func (l *LeaderElection) Run(ctx context.Context, client kubernetes.Interface, recorder record.EventRecorder, run func(context.Context) error) error {
	ns := l.Namespace
	if ns == "" {
		ns = os.Getenv("POD_NAMESPACE")
	}
	if ns == "" {
		ns = "kube-system"
	}
	host, _ := os.Hostname()
	id := host + "_" + string(uuid.NewUUID())
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, ns, l.Name, client.CoreV1(), client.CoordinationV1(),
		resourcelock.ResourceLockConfig{Identity: id, EventRecorder: recorder})
	if err != nil {
		return err
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The role runs on the elector's goroutine and may still be ending when
	// the elector returns: its result is shared under mu.
	var (
		mu     sync.Mutex
		runErr error
		// roleEnded: the role returned on its own, before the elector
		// cancelled its context.
		roleEnded bool
		lost      bool
	)
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   l.LeaseDuration,
		RenewDeadline:   l.RenewDeadline,
		RetryPeriod:     l.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            l.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leading context.Context) {
				err := run(leading)
				mu.Lock()
				runErr = err
				roleEnded = leading.Err() == nil
				mu.Unlock()
				// A role that ends ends the election: the Lease is released.
				cancel()
			},
			OnStoppedLeading: func() {
				mu.Lock()
				defer mu.Unlock()
				// Neither SIGTERM nor the role ended the election. Not
				// ctx.Err(): when the Lease is lost, the elector cancels
				// the role's context, and the role, ending, cancels ctx,
				// possibly before this runs.
				lost = parent.Err() == nil && !roleEnded
			},
		},
	})
	if err != nil {
		// RunOrDie would panic here.
		return fmt.Errorf("leader election: %w", err)
	}
	elector.Run(ctx)
	mu.Lock()
	defer mu.Unlock()
	if lost {
		return errors.New("lost the leader election Lease")
	}
	return runErr
}
