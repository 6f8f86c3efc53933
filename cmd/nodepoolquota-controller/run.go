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
	"slices"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"

	"github.com/adminsched/scheduler-plugins/apis/scheduling/v1alpha1"
	"github.com/adminsched/scheduler-plugins/internal/controllerrun"
	"github.com/adminsched/scheduler-plugins/pkg/generated/clientset/versioned"
	npqinformers "github.com/adminsched/scheduler-plugins/pkg/generated/informers/externalversions"
	"github.com/adminsched/scheduler-plugins/pkg/nodepoolquota/controller"
)

// name is the binary's, its Lease's by default and its events' component.
const name = "nodepoolquota-controller"

// crd is where the NodePoolQuota CRD is, for the error that says to
// install it.
const crd = "manifests/crds/scheduling.adminsched.io_nodepoolquotas.yaml"

// runFlags are the run subcommand's flags.
type runFlags struct {
	kubeconfig     string
	leaderElection controllerrun.LeaderElection
	httpAddress    string
}

func newRunCommand() *cobra.Command {
	f := runFlags{}
	logging := controllerrun.NewLogging()
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Lift the gates and write the quotas' status (run as a Deployment)",
		Long: `run watches the NodePoolQuotas, pods, nodes and namespaces. For each pod that carries the
gate ` + v1alpha1.SchedulingGate + `, oldest first, it removes that gate (and no
other) when the pod may land outside every quota's pool, or when its team's usage in the pool,
plus what its ungated pods on their way to the pool ask for, plus the pod's requests stay
within every limit. A held pod gets one Event (reason ` + controller.EventHeld + `).`,
		Args: cobra.NoArgs,
		// SIGTERM cancels the context: the leader releases its Lease.
		PreRunE: func(cmd *cobra.Command, _ []string) error { return logging.Start(cmd) },
		RunE:    func(cmd *cobra.Command, _ []string) error { return runController(cmd.Context(), f) },
	}
	fs := cmd.Flags()
	logging.AddFlags(fs)
	controllerrun.AddKubeconfigFlag(fs, &f.kubeconfig)
	f.leaderElection.AddFlags(fs, name)
	controllerrun.AddHTTPAddressFlag(fs, &f.httpAddress)
	return controllerrun.WithSecureServing(cmd, name)
}

func runController(ctx context.Context, f runFlags) error {
	runner := controllerrun.Controller{
		Name:            name,
		Kubeconfig:      f.kubeconfig,
		LeaderElection:  f.leaderElection,
		HTTPAddress:     f.httpAddress,
		RegisterMetrics: controller.RegisterMetrics,
		Leading:         "Leading: lifting NodePoolQuota gates",
	}
	return runner.Run(ctx, func(ctx context.Context, restConfig *rest.Config, client kubernetes.Interface, recorder record.EventRecorder) error {
		// Built from the configuration kubernetes.NewForConfig accepted:
		// it fails on the same configurations only.
		quotaClient, err := versioned.NewForConfig(restConfig)
		if err != nil {
			return err
		}
		if err := served(ctx, client.Discovery()); err != nil {
			return err
		}
		qf := npqinformers.NewSharedInformerFactory(quotaClient, 0)
		c, err := controller.New(client, informers.NewSharedInformerFactory(client, 0), controller.Quotas{
			Informer: qf.Scheduling().V1alpha1().NodePoolQuotas().Informer(),
			Start:    qf.Start,
			Client:   quotaClient.SchedulingV1alpha1().NodePoolQuotas(),
		}, recorder)
		if err != nil {
			return err
		}
		return c.Run(ctx)
	})
}

// servedTimeout bounds the wait for discovery to list NodePoolQuotas: a
// CRD applied with the controller is Established a moment before
// discovery lists it.
var servedTimeout = 10 * time.Second

// served checks that the API server serves NodePoolQuotas: without the
// CRD the informer would retry its list forever and the gated pods wait
// without a word.
func served(ctx context.Context, d discovery.DiscoveryInterface) error {
	gv := v1alpha1.SchemeGroupVersion.String()
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, servedTimeout, true, func(context.Context) (bool, error) {
		list, err := d.ServerResourcesForGroupVersion(gv)
		if err != nil && !apierrors.IsNotFound(err) {
			lastErr = fmt.Errorf("discovering %s: %w", gv, err)
			return false, nil
		}
		lastErr = nil
		return list != nil && slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == "nodepoolquotas" }), nil
	})
	switch {
	case err == nil:
		return nil
	case lastErr != nil:
		return lastErr
	}
	return fmt.Errorf("the API server does not serve nodepoolquotas.%s (waited %s): install the CRD %s (kubectl apply -k manifests/crds)", gv, servedTimeout, crd)
}
