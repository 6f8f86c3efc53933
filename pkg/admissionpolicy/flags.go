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

package admissionpolicy

import (
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

// RenderFlags are the flags of a command that renders policies from a
// scheduler's config: --config, --output-file, --failure-policy and
// --kube-version.
type RenderFlags struct {
	Config, OutputFile, FailurePolicy, KubeVersion string
}

// AddFlags adds the flags to fs; ignoreMeans says what Ignore does to a pod
// when a policy cannot be evaluated.
func (f *RenderFlags) AddFlags(fs *pflag.FlagSet, ignoreMeans string) {
	fs.StringVar(&f.Config, "config", "", "the KubeSchedulerConfiguration file (as given to kube-scheduler --config)")
	fs.StringVar(&f.OutputFile, "output-file", "", "write the policies to this file instead of standard output")
	fs.StringVar(&f.FailurePolicy, "failure-policy", string(Ignore),
		"what the API server does with a pod when a policy cannot be evaluated: Ignore "+ignoreMeans+", Fail refuses it")
	fs.StringVar(&f.KubeVersion, "kube-version", kubeversion.String(),
		"the Kubernetes version of the kube-apiservers the policies are for (1.35 to the newest + 1): 1.36 and later serve them as admissionregistration.k8s.io/v1, 1.35 as v1beta1 behind a feature gate")
}

// Parse reads --kube-version and --failure-policy.
func (f *RenderFlags) Parse() (Served, FailurePolicyType, error) {
	served, err := ParseKubeVersion(f.KubeVersion)
	if err != nil {
		return Served{}, "", err
	}
	fp := FailurePolicyType(f.FailurePolicy)
	if fp != Ignore && fp != Fail {
		return Served{}, "", badFailurePolicy("--failure-policy", fp)
	}
	return served, fp, nil
}

// Write writes data to --output-file, or to stdout without one.
func (f *RenderFlags) Write(stdout io.Writer, data []byte) error {
	if f.OutputFile == "" {
		_, err := stdout.Write(data)
		return err
	}
	return os.WriteFile(f.OutputFile, data, 0o644)
}
