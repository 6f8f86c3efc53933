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
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"

	"github.com/adminsched/scheduler-plugins/apis/config"
	// Registers our plugins' args kinds with the scheduler's scheme.
	_ "github.com/adminsched/scheduler-plugins/apis/config/scheme"
	"github.com/adminsched/scheduler-plugins/internal/filelimit"
	"github.com/adminsched/scheduler-plugins/internal/pluginnames"
	"github.com/adminsched/scheduler-plugins/pkg/admissionpolicy"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/admission"
)

// maxConfigBytes caps the config file: 1 MiB is the most a ConfigMap, where
// a scheduler's config usually lives, holds.
const maxConfigBytes = 1 << 20

func newRenderCommand(stdout, stderr io.Writer) *cobra.Command {
	var flags admissionpolicy.RenderFlags
	var cluster clusterFlags
	cmd := &cobra.Command{
		Use:   "render --config FILE",
		Short: "Render OnDemandShare policies as MutatingAdmissionPolicies that gate and label the pods they select",
		Long: `render reads a KubeSchedulerConfiguration as kube-scheduler's --config reads it
(strictly, with our plugins' args validated) and writes, for every OnDemandShare
policy of its profiles, a MutatingAdmissionPolicy and its binding. When a pod the
policy selects is created, they add the scheduling gate ondemandshare.adminsched.io/decide
and the label ondemandshare.adminsched.io/policy=<policy>: the pod waits, unseen by
autoscalers, until the controller has decided its capacity class. A pod two policies
select belongs to the first by name.

With --apply it server-side applies them instead of writing them, and deletes those
it applied that the config no longer has; with --delete it deletes every one it
applied (before the controller is removed: a gated pod needs the controller). The
controller itself has no right on admission policies: an admin, or the chart's
short-lived hook Job, runs these.`,
		Example: `  ondemandshare-controller render --config scheduler-config.yaml | kubectl apply -f -
  ondemandshare-controller render --config scheduler-config.yaml --kube-version 1.35 --output-file policies.yaml
  ondemandshare-controller render --config scheduler-config.yaml --apply
  ondemandshare-controller render --delete`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cluster.check(flags); err != nil {
				return err
			}
			if cluster.delete {
				return cluster.run(cmd.Context(), nil)
			}
			if flags.Config == "" {
				return fmt.Errorf("--config is required: the KubeSchedulerConfiguration file whose OnDemandShare policies to render")
			}
			served, fp, err := flags.Parse()
			if err != nil {
				return err
			}
			cfg, err := loadConfig(flags.Config)
			if err != nil {
				return err
			}
			profiles, err := admission.FromConfig(cfg)
			if err != nil {
				return fmt.Errorf("scheduler config %s: %w", flags.Config, err)
			}
			res, err := admission.Render(profiles, admission.Options{FailurePolicy: fp})
			if err != nil {
				return fmt.Errorf("scheduler config %s: %w", flags.Config, err)
			}
			if len(profiles) == 0 {
				fmt.Fprintf(stderr, "no profile of %s holds OnDemandShare args: nothing to render\n", flags.Config)
			}
			if cluster.apply {
				return cluster.run(cmd.Context(), res)
			}
			var buf bytes.Buffer
			if err := res.WriteYAMLFor(&buf, flags.Config, served); err != nil {
				return err
			}
			return flags.Write(stdout, buf.Bytes())
		},
	}
	flags.AddFlags(cmd.Flags(), "creates it ungated (the guard plugin still holds its workload to the minimum, unseen by autoscalers)")
	cluster.addFlags(cmd.Flags())
	return cmd
}

// loadConfig loads path as kube-scheduler's --config does, with our
// plugins' args validated, after capping its size.
func loadConfig(path string) (*schedconfig.KubeSchedulerConfiguration, error) {
	if err := filelimit.CheckSize(path, maxConfigBytes, "scheduler config file"); err != nil {
		return nil, fmt.Errorf("scheduler config: %w", err)
	}
	return admissionpolicy.LoadConfig(path, checkPluginNames)
}

// checkPluginNames refuses, with their field paths, plugin names the
// scheduler does not have and args no plugin of their profile reads, but
// OnDemandShare's: this controller reads them whether or not the profile
// runs the guard plugin.
func checkPluginNames(data []byte) error {
	known := pluginnames.Known().Insert(config.OnDemandShareName)
	errs, err := pluginnames.UnknownNames(data, known)
	if err != nil || len(errs) > 0 {
		// A misspelt name's args are unread too: say it once.
		return errors.Join(err, errs.ToAggregate())
	}
	unread, err := pluginnames.UnreadArgs(data, known, config.OnDemandShareName)
	if err != nil {
		return err
	}
	return unread.ToAggregate()
}
