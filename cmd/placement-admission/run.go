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
	"os"
	"regexp"
	"strconv"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	"sigs.k8s.io/yaml"

	// Registers our plugins' args kinds with the scheduler's scheme.
	_ "github.com/adminsched/scheduler-plugins/apis/config/scheme"
	pluginvalidation "github.com/adminsched/scheduler-plugins/apis/config/validation"
	"github.com/adminsched/scheduler-plugins/internal/filelimit"
	"github.com/adminsched/scheduler-plugins/internal/pluginnames"
	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
	"github.com/adminsched/scheduler-plugins/pkg/placementpolicy/admission"
)

// maxConfigBytes caps the config file: 1 MiB is the most a ConfigMap, where
// a scheduler's config usually lives, holds.
const maxConfigBytes = 1 << 20

func newCommand(stdout, stderr io.Writer) *cobra.Command {
	var configPath, outputFile, failurePolicy, kubeVersion string
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
			if configPath == "" {
				return fmt.Errorf("--config is required: the KubeSchedulerConfiguration file whose PlacementPolicy rules to render")
			}
			served, err := servedBy(kubeVersion)
			if err != nil {
				return err
			}
			fp := admission.FailurePolicyType(failurePolicy)
			if fp != admission.Ignore && fp != admission.Fail {
				return fmt.Errorf("--failure-policy %q: must be %s or %s", failurePolicy, admission.Ignore, admission.Fail)
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
			if outputFile == "" {
				_, err = stdout.Write(buf.Bytes())
				return err
			}
			return os.WriteFile(outputFile, buf.Bytes(), 0o644)
		},
	}
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	flags := cmd.Flags()
	flags.StringVar(&configPath, "config", "", "the KubeSchedulerConfiguration file (as given to kube-scheduler --config)")
	flags.StringVar(&outputFile, "output-file", "", "write the policies to this file instead of standard output")
	flags.StringVar(&failurePolicy, "failure-policy", string(admission.Ignore),
		"what the API server does with a pod when a policy cannot be evaluated: Ignore creates it without the rule's affinity (the scheduler still enforces the rule), Fail refuses it")
	flags.StringVar(&kubeVersion, "kube-version", kubeversion.String(),
		"the Kubernetes version of the kube-apiservers the policies are for (1.35 to the newest + 1): 1.36 and later serve them as admissionregistration.k8s.io/v1, 1.35 as v1beta1 behind a feature gate")
	return cmd
}

// kubeVersionFlag is what --kube-version takes: 1.36, v1.36 or v1.36.3.
var kubeVersionFlag = regexp.MustCompile(`^v?1\.([0-9]+)(\.[0-9]+)?$`)

// servedBy reads --kube-version.
func servedBy(version string) (admission.Served, error) {
	m := kubeVersionFlag.FindStringSubmatch(version)
	if m == nil {
		return admission.Served{}, fmt.Errorf("--kube-version %q: want a Kubernetes version such as 1.36 or v1.36.3", version)
	}
	minor, err := strconv.Atoi(m[1])
	if err != nil {
		return admission.Served{}, fmt.Errorf("--kube-version %q: %w", version, err)
	}
	served, err := admission.ServedBy(minor, kubeversion.Minor)
	if err != nil {
		return admission.Served{}, fmt.Errorf("--kube-version %q: %w", version, err)
	}
	return served, nil
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

// loadConfig loads path with the loader kube-scheduler's --config uses (the
// scheme's strict decoder and defaults), then validates it and our plugins'
// args, so that what is rendered is what the scheduler would run.
func loadConfig(path string) (*schedconfig.KubeSchedulerConfiguration, error) {
	if err := filelimit.CheckSize(path, maxConfigBytes, "scheduler config file"); err != nil {
		return nil, fmt.Errorf("scheduler config: %w", err)
	}
	cfg, err := options.LoadConfigFromFile(klog.Background(), path)
	if err != nil {
		return nil, fmt.Errorf("scheduler config %s: %w", path, err)
	}
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		return nil, fmt.Errorf("scheduler config %s: %w", path, err)
	}
	// The file as written (it decoded strictly above), for the field paths
	// of plugin names the scheduler does not have: a misspelt pluginConfig
	// name would leave PlacementPolicy without its rules and render none.
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scheduler config %s: %w", path, err)
	}
	var written configv1.KubeSchedulerConfiguration
	if err := yaml.Unmarshal(data, &written); err != nil {
		return nil, fmt.Errorf("scheduler config %s: %w", path, err)
	}
	if errs := pluginnames.Check(&written, pluginnames.Known()); len(errs) > 0 {
		return nil, fmt.Errorf("scheduler config %s: %w", path, errs.ToAggregate())
	}
	// Args for a plugin its profile does not enable reach nothing: the
	// rules the author meant would not be rendered.
	defaulted, err := pluginnames.DecodeDefaulted(data)
	if err != nil {
		return nil, fmt.Errorf("scheduler config %s: %w", path, err)
	}
	var errs field.ErrorList
	for _, u := range pluginnames.FindUnused(defaulted, pluginnames.Known()) {
		errs = append(errs, field.Invalid(u.Path.Child("name"), u.Name, u.Reason()))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("scheduler config %s: %w", path, errs.ToAggregate())
	}
	for i, prof := range cfg.Profiles {
		for j, pc := range prof.PluginConfig {
			p := field.NewPath("profiles").Index(i).Child("pluginConfig").Index(j).Child("args")
			if err := pluginvalidation.ValidatePluginArgs(p, pc.Name, pc.Args); err != nil {
				return nil, fmt.Errorf("scheduler config %s: %w", path, err)
			}
		}
	}
	return cfg, nil
}
