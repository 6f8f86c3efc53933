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

package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/internal/controllerrun"
	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/controller"
	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/nodeclaims"
)

// name is the binary's, its Lease's by default and its events' component.
const name = "maintenancewindow-controller"

// runFlags are the run subcommand's flags.
type runFlags struct {
	configFile, kubeconfig, profile string
	leaderElection                  controllerrun.LeaderElection
	httpAddress                     string
	workers                         int
	// plannedAhead is set only when the flag is: the default is the args'
	// horizon.
	plannedAhead *time.Duration
}

func newRunCommand() *cobra.Command {
	f := runFlags{}
	logging := controllerrun.NewLogging()
	var ahead time.Duration
	cmd := &cobra.Command{
		Use:   "run --config FILE",
		Short: "Write the windows' conditions and taint (run as a Deployment)",
		Long: `run watches the nodes and writes, for the windows MaintenanceWindow reads (its annotation
and, with providerSignals, the providers' labels; with karpenter, Karpenter's NodeClaims):
MaintenancePlanned=True when a window opens within --planned-ahead, and
MaintenanceInProgress=True with a NoSchedule taint while it is open. It removes them when
the window ends or is no longer announced. It never touches a taint or condition it did
not set: its conditions carry its own reasons, its taint its own value.`,
		Example: `  maintenancewindow-controller run --config /etc/kubernetes/custom-scheduler/scheduler-config.yaml`,
		Args:    cobra.NoArgs,
		// SIGTERM cancels the context: the leader releases its Lease.
		PreRunE: func(cmd *cobra.Command, _ []string) error { return logging.Start(cmd) },
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("planned-ahead") {
				f.plannedAhead = &ahead
			}
			return runController(cmd.Context(), f)
		},
	}
	fs := cmd.Flags()
	logging.AddFlags(fs)
	fs.StringVar(&f.configFile, "config", "", "The scheduler's KubeSchedulerConfiguration file, whose MaintenanceWindow args say where nodes announce windows (required).")
	fs.StringVar(&f.profile, "profile", "", "The schedulerName of the profile whose MaintenanceWindow args to follow; empty: the only profile that runs MaintenanceWindow.")
	fs.DurationVar(&ahead, "planned-ahead", 0, "How long before a window opens the node gets MaintenancePlanned=True (default: the args' horizon).")
	controllerrun.AddKubeconfigFlag(fs, &f.kubeconfig)
	f.leaderElection.AddFlags(fs, name)
	controllerrun.AddHTTPAddressFlag(fs, &f.httpAddress)
	fs.IntVar(&f.workers, "workers", 4, "How many nodes are synced at once; one node is never synced by two workers.")
	_ = cmd.MarkFlagRequired("config")
	return controllerrun.WithSecureServing(cmd, name)
}

func runController(ctx context.Context, f runFlags) error {
	if f.workers < 1 {
		return fmt.Errorf("--workers (%d) must be at least 1", f.workers)
	}
	if f.plannedAhead != nil && *f.plannedAhead < 0 {
		return fmt.Errorf("--planned-ahead (%s) must not be negative", *f.plannedAhead)
	}
	runner := controllerrun.Controller{
		Name:            name,
		Kubeconfig:      f.kubeconfig,
		LeaderElection:  f.leaderElection,
		HTTPAddress:     f.httpAddress,
		RegisterMetrics: controller.RegisterMetrics,
		Leading:         "Leading: writing maintenance windows",
	}
	if err := runner.Check(); err != nil {
		return err
	}
	args, profile, err := loadArgs(f.configFile, f.profile)
	if err != nil {
		return err
	}
	runner.LeadingValues = []any{"profile", profile}
	return runner.Run(ctx, func(ctx context.Context, restConfig *rest.Config, client kubernetes.Interface, recorder record.EventRecorder) error {
		var opts []controller.Option
		if f.plannedAhead != nil {
			opts = append(opts, controller.WithPlannedAhead(*f.plannedAhead))
		}
		// The NodeClaims' changes requeue their nodes once the controller
		// exists; until then, its first sync of every node reads them.
		var ctl atomic.Pointer[controller.Controller]
		claims, err := nodeClaims(ctx, restConfig, client, args, func(node string) {
			if c := ctl.Load(); c != nil {
				c.Enqueue(node)
			}
		})
		if err != nil {
			return err
		}
		if claims != nil {
			opts = append(opts, controller.WithNodeClaims(claims))
		}
		c, err := controller.New(client, informers.NewSharedInformerFactory(client, 0), args, recorder, opts...)
		if err != nil {
			return err
		}
		ctl.Store(c)
		return c.Run(ctx, f.workers)
	})
}

// nodeClaims returns an index of Karpenter's NodeClaims when the args read
// them and the API server serves them; nil otherwise, said in one line.
func nodeClaims(ctx context.Context, restConfig *rest.Config, client kubernetes.Interface, args *config.MaintenanceWindowArgs, changed func(string)) (*nodeclaims.Index, error) {
	logger := klog.FromContext(ctx)
	if !args.Karpenter {
		return nil, nil
	}
	served, err := nodeclaims.Served(client.Discovery())
	if err != nil {
		return nil, fmt.Errorf("karpenter: discovering %s: %w", nodeclaims.GVR, err)
	}
	if !served {
		logger.Info("Not reading Karpenter's NodeClaims: the API server does not serve them", "resource", nodeclaims.GVR.String())
		return nil, nil
	}
	dyn, err := dynamic.NewForConfig(restConfig)
	if err != nil {
		return nil, err
	}
	return nodeclaims.NewIndex(ctx, dyn, nodeclaims.WithOnChange(changed)), nil
}
