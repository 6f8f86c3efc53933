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
	"bytes"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"

	// Registers our plugins' args kinds with the scheduler's scheme.
	_ "github.com/adminsched/scheduler-plugins/apis/config/scheme"
	"github.com/adminsched/scheduler-plugins/internal/filelimit"
	"github.com/adminsched/scheduler-plugins/internal/pluginnames"
	"github.com/adminsched/scheduler-plugins/pkg/admissionpolicy"
	"github.com/adminsched/scheduler-plugins/pkg/placementpolicy/admission"
)

// maxConfigBytes caps the config file: 1 MiB is the most a ConfigMap, where
// a scheduler's config usually lives, holds.
const maxConfigBytes = 1 << 20

func newCommand(stdout, stderr io.Writer) *cobra.Command {
	var flags admissionpolicy.RenderFlags
	cmd := &cobra.Command{
		Use:   "placement-admission --config FILE",
		Short: "Render PlacementPolicy rules as MutatingAdmissionPolicies that autoscalers can read",
		Long: `placement-admission reads a KubeSchedulerConfiguration as kube-scheduler's --config
reads it (strictly, with our plugins' args validated) and writes, for every
PlacementPolicy rule of the profiles that run the plugin, a
MutatingAdmissionPolicy and its binding. They add to each pod the rule applies
to, when it is created, what the rule means as node affinity: Require ANDed
into every required term the pod has, Prefer as a preferred term with the
rule's weight. The scheduler still enforces the rules; the policies make them
visible to Cluster Autoscaler and Karpenter, which simulate scheduling from
the pod spec.`,
		Example: `  placement-admission --config manifests/placementpolicy/scheduler-config.yaml | kubectl apply -f -
  placement-admission --config scheduler-config.yaml --failure-policy Fail --output-file policies.yaml`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			configPath := flags.Config
			if configPath == "" {
				return fmt.Errorf("--config is required: the KubeSchedulerConfiguration file whose PlacementPolicy rules to render")
			}
			served, fp, err := flags.Parse()
			if err != nil {
				return err
			}
			cfg, err := loadConfig(configPath)
			if err != nil {
				return err
			}
			profiles, err := admission.FromConfig(cfg)
			if err != nil {
				return fmt.Errorf("scheduler config %s: %w", configPath, err)
			}
			res, err := admission.Render(profiles, admission.Options{FailurePolicy: fp})
			if err != nil {
				return fmt.Errorf("scheduler config %s: %w", configPath, err)
			}
			for _, s := range res.Skipped {
				fmt.Fprintf(stderr, "rule %q not rendered: %s\n", s.Rule, s.Reason)
			}
			if len(profiles) == 0 {
				fmt.Fprintf(stderr, "no profile of %s runs PlacementPolicy at filter or score: nothing to render\n", configPath)
			}
			var buf bytes.Buffer
			if err := res.WriteYAMLFor(&buf, configPath, served); err != nil {
				return err
			}
			return flags.Write(stdout, buf.Bytes())
		},
	}
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	flags.AddFlags(cmd.Flags(), "creates it without the rule's affinity (the scheduler still enforces the rule)")
	return cmd
}

func run(args []string, stdout, stderr io.Writer) int {
	cmd := newCommand(stdout, stderr)
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		fmt.Fprintf(stderr, "placement-admission: %v\n", err)
		return 1
	}
	return 0
}

// loadConfig loads path as kube-scheduler's --config does, with our
// plugins' args validated (admissionpolicy.LoadConfig), after capping its
// size, and refuses plugin names the scheduler does not have.
func loadConfig(path string) (*schedconfig.KubeSchedulerConfiguration, error) {
	if err := filelimit.CheckSize(path, maxConfigBytes, "scheduler config file"); err != nil {
		return nil, fmt.Errorf("scheduler config: %w", err)
	}
	return admissionpolicy.LoadConfig(path, checkPluginNames)
}

// checkPluginNames refuses, with their field paths, plugin names the
// scheduler does not have (a misspelt pluginConfig name would leave
// PlacementPolicy without its rules and render none), and args for a plugin
// its profile does not enable: they reach nothing, and the rules the author
// meant would not be rendered. It looks for the latter only once every name
// is known, so that a misspelt pluginConfig name is refused once, with the
// name meant.
func checkPluginNames(data []byte) error {
	errs, err := pluginnames.UnknownNames(data, pluginnames.Known())
	if err == nil && len(errs) == 0 {
		errs, err = pluginnames.UnreadArgs(data, pluginnames.Known())
	}
	if err != nil {
		return err
	}
	return errs.ToAggregate()
}
