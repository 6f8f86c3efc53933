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
	"errors"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"

	"github.com/adminsched/scheduler-plugins/internal/controllerrun"
	"github.com/adminsched/scheduler-plugins/pkg/admissionpolicy"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/admission"
)

// clusterFlags are render's flags that write to the API server instead of
// standard output. The controller has no right on admission policies (a
// policy can mutate any pod): an admin or the chart's hook Job runs these.
type clusterFlags struct {
	apply, delete bool
	kubeconfig    string
}

func (c *clusterFlags) addFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&c.apply, "apply", false, "Server-side apply the policies instead of writing them, and delete those render applied that --config no longer has.")
	fs.BoolVar(&c.delete, "delete", false, "Delete every policy render applied, whatever --config holds (before removing the controller: the pods they gate need it).")
	controllerrun.AddKubeconfigFlag(fs, &c.kubeconfig)
}

// check refuses flags that contradict each other.
func (c *clusterFlags) check(render admissionpolicy.RenderFlags) error {
	switch {
	case c.apply && c.delete:
		return errors.New("--apply and --delete contradict each other: give one")
	case (c.apply || c.delete) && render.OutputFile != "":
		return errors.New("--output-file writes the policies to a file, --apply and --delete to the API server: give one")
	case !c.apply && !c.delete && c.kubeconfig != "":
		return errors.New("--kubeconfig is for --apply or --delete: render alone talks to no API server")
	}
	return nil
}

// run applies res (--apply) or deletes every owned policy (--delete, res
// nil): applying no policy prunes them all.
func (c *clusterFlags) run(ctx context.Context, res *admission.Result) error {
	restConfig, err := controllerrun.ClientConfig(c.kubeconfig, "ondemandshare-controller")
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return err
	}
	if res == nil {
		res = &admission.Result{}
	}
	return applyPolicies(ctx, client, res)
}
