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

	"github.com/spf13/cobra"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"

	"github.com/adminsched/scheduler-plugins/internal/controllerrun"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/admission"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/controller"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/policy"
)

// runFlags are the run subcommand's flags.
type runFlags struct {
	configFile, kubeconfig string
	leaderElection         controllerrun.LeaderElection
	httpAddress            string
	workers                int
}

func newRunCommand() *cobra.Command {
	f := runFlags{}
	logging := controllerrun.NewLogging()
	cmd := &cobra.Command{
		Use:   "run --config FILE",
		Short: "Decide the capacity class of the pods the admission policies gated (run as a Deployment)",
		Long: `run watches the pods that the rendered admission policies gated and labelled, and
decides each one's capacity class so that every workload keeps its policy's minimum on
on-demand nodes: it writes the slot and class labels, the required node affinity of the
class (and its tolerations), the pod-deletion-cost that makes scale-down remove the
highest slots first, and removes the gate, in one update. Its state lives in the pods:
a new leader rebuilds it from the API server. It does not apply the admission
policies (render --apply does): it has no right on them.`,
		Example: `  ondemandshare-controller run --config /etc/kubernetes/custom-scheduler/scheduler-config.yaml`,
		Args:    cobra.NoArgs,
		// SIGTERM cancels the context: the leader releases its Lease.
		PreRunE: func(cmd *cobra.Command, _ []string) error { return logging.Start(cmd) },
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runController(cmd.Context(), f)
		},
	}
	fs := cmd.Flags()
	logging.AddFlags(fs)
	fs.StringVar(&f.configFile, "config", "", "The scheduler's KubeSchedulerConfiguration file, whose OnDemandShare args hold the policies (required).")
	controllerrun.AddKubeconfigFlag(fs, &f.kubeconfig)
	f.leaderElection.AddFlags(fs, "ondemandshare-controller")
	controllerrun.AddHTTPAddressFlag(fs, &f.httpAddress)
	fs.IntVar(&f.workers, "workers", 4, "How many workloads are decided at once; one workload is never decided by two workers.")
	_ = cmd.MarkFlagRequired("config")
	return controllerrun.WithSecureServing(cmd, "ondemandshare-controller")
}

func runController(ctx context.Context, f runFlags) error {
	if f.workers < 1 {
		return fmt.Errorf("--workers (%d) must be at least 1", f.workers)
	}
	runner := controllerrun.Controller{
		Name:            "ondemandshare-controller",
		Kubeconfig:      f.kubeconfig,
		LeaderElection:  f.leaderElection,
		HTTPAddress:     f.httpAddress,
		RegisterMetrics: controller.RegisterMetrics,
		Leading:         "Leading: deciding gated pods",
	}
	if err := runner.Check(); err != nil {
		return err
	}
	policies, err := loadPolicies(f.configFile)
	if err != nil {
		return err
	}
	runner.LeadingValues = []any{"policies", len(policies)}
	return runner.Run(ctx, func(ctx context.Context, _ *rest.Config, client kubernetes.Interface, _ record.EventRecorder) error {
		factory := informers.NewSharedInformerFactory(client, 0)
		c, err := controller.New(client, factory, policies)
		if err != nil {
			return err
		}
		return c.Run(ctx, f.workers)
	})
}

// loadPolicies returns the policies of every profile of the scheduler
// config at path. It renders their admission policies too, as render does,
// for render's checks: a policy several profiles hold must mean the same in
// each, so the first profile's copy stands for all.
func loadPolicies(path string) ([]*policy.Policy, error) {
	cfg, err := loadConfig(path)
	if err != nil {
		return nil, err
	}
	profiles, err := admission.FromConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("scheduler config %s: %w", path, err)
	}
	if _, err := admission.Render(profiles, admission.Options{}); err != nil {
		return nil, fmt.Errorf("scheduler config %s: %w", path, err)
	}
	var out []*policy.Policy
	seen := map[string]bool{}
	for _, p := range profiles {
		compiled, err := policy.Compile(p.Args)
		if err != nil {
			return nil, fmt.Errorf("scheduler config %s: profile %s: %w", path, p.SchedulerName, err)
		}
		for _, c := range compiled {
			if !seen[c.Name] {
				seen[c.Name] = true
				out = append(out, c)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("scheduler config %s: no profile holds OnDemandShare policies: nothing to decide", path)
	}
	return out, nil
}
