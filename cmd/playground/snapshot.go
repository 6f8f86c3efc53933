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
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"

	"github.com/adminsched/scheduler-plugins/internal/filelimit"
	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
	"github.com/adminsched/scheduler-plugins/internal/playground/snapshot"
)

const snapshotLong = `Writes a scenario of a live cluster: its nodes (name, labels, taints,
allocatable cpu, memory and pods, unschedulable, and the annotation
scheduling.adminsched.io/maintenance-window only) and its bound pods that
are not Succeeded or Failed (namespace, name, node, labels, controller
owner, priority and container requests only: no images, env, volumes,
secrets or annotations). Replay it with "playground --scenario FILE", or
name it as the base of a scenario that adds workloads ("base: cluster.yaml").

With --include-pending it also records the pods waiting for a node, as pods
for the replay to place: labels, owner, priority, requests, host ports and
what the scheduler filters on (node selector, affinity, tolerations,
topology spread constraints), and their last FailedScheduling event. Each
gets the replay config's profile of the scheduler it named if there is one,
else its first profile; "playground --explain" then says why it waits.`

const snapshotExample = `  # The nodes and bound pods of the current context's cluster
  playground snapshot --output-file cluster.yaml

  # Only the pods of one namespace (nodes are always all recorded)
  playground snapshot --namespace default --output-file cluster.yaml

  # Replay it: the pods bound where they are, then the scenario's own
  playground --scenario cluster.yaml

  # Why are pods Pending? Record them, replay with the scheduler's config
  playground snapshot --include-pending --output-file cluster.yaml
  playground --scenario cluster.yaml --config scheduler-config.yaml --explain`

type snapshotFlags struct {
	kubeconfig, context, namespace, outputFile string
	allNamespaces, includePending              bool
	schedulerNames                             []string
	pageSize                                   atLeast
	verbosity                                  int
}

func newSnapshotCommand() *cobra.Command {
	f := &snapshotFlags{}
	cmd := &cobra.Command{
		Use:     "snapshot [flags]",
		Short:   "Write a scenario of a live cluster's nodes and pods",
		Long:    snapshotLong,
		Example: snapshotExample,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.namespace != "" {
				if cmd.Flags().Changed("all-namespaces") && f.allNamespaces {
					return errors.New("--namespace and --all-namespaces exclude each other")
				}
				f.allNamespaces = false
			} else if !f.allNamespaces {
				return errors.New("--all-namespaces=false needs --namespace")
			}
			if len(f.schedulerNames) > 0 && !f.includePending {
				return errors.New("--scheduler-name selects pending pods: it needs --include-pending")
			}
			return exitWith(runSnapshot(cmd.Context(), f, cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster; without it, $KUBECONFIG, else ~/.kube/config")
	fs.StringVar(&f.context, "context", "", "kubeconfig context; without it, the current context")
	fs.StringVarP(&f.namespace, "namespace", "n", "", "record the pods of this namespace only (nodes are always all recorded)")
	fs.BoolVarP(&f.allNamespaces, "all-namespaces", "A", true, "record the pods of every namespace; --namespace turns it off")
	fs.StringVar(&f.outputFile, "output-file", "", "where to write the scenario; without it, stdout")
	fs.BoolVar(&f.includePending, "include-pending", false, "also record the pods waiting for a node, as pods for the replay to place, with their last FailedScheduling event")
	fs.StringSliceVar(&f.schedulerNames, "scheduler-name", nil, "with --include-pending, record only the pending pods that name this scheduler (repeatable, or comma-separated); default: every scheduler's")
	f.pageSize = atLeast{value: 500, min: 1}
	fs.Var(&f.pageSize, "page-size", "objects per list request")
	fs.IntVarP(&f.verbosity, "v", "v", 0, "log verbosity (logs go to stderr)")
	_ = cmd.MarkFlagFilename("kubeconfig")
	_ = cmd.MarkFlagFilename("output-file", "yaml", "yml")
	return cmd
}

// maxKubeconfigBytes caps the kubeconfig files `playground snapshot` reads:
// one with the certificates of a hundred clusters embedded is well under
// 1 MiB.
const maxKubeconfigBytes = 16 << 20

// runSnapshot takes the snapshot of f and returns the exit code.
func runSnapshot(ctx context.Context, f *snapshotFlags, stdout, stderr io.Writer) int {
	cfg := textlogger.NewConfig(textlogger.Output(stderr))
	_ = cfg.Verbosity().Set(strconv.Itoa(f.verbosity))
	ctx = klog.NewContext(ctx, textlogger.NewLogger(cfg))

	rules := clientcmd.NewDefaultClientConfigLoadingRules() // $KUBECONFIG, else ~/.kube/config
	if f.kubeconfig != "" {
		rules.ExplicitPath = f.kubeconfig
	}
	// client-go reads each file whole: refuse /dev/zero or a huge file first.
	for _, path := range rules.GetLoadingPrecedence() {
		if err := filelimit.CheckSize(path, maxKubeconfigBytes, "kubeconfig file"); err != nil {
			fmt.Fprintf(stderr, "playground snapshot: loading the kubeconfig: %v\n", err)
			return exitInput
		}
	}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: f.context})
	restConfig, err := loader.ClientConfig()
	if err != nil {
		fmt.Fprintf(stderr, "playground snapshot: loading the kubeconfig: %v\n", err)
		return exitInput
	}
	restConfig.QPS, restConfig.Burst = 50, 100
	restConfig.UserAgent = "adminsched-playground-snapshot"
	client, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		fmt.Fprintf(stderr, "playground snapshot: %v\n", err)
		return exitInput
	}

	start := time.Now()
	s, err := snapshot.Take(ctx, client, snapshot.Options{Namespace: f.namespace, PageSize: f.pageSize.value, Progress: stderr,
		Pending: f.includePending, SchedulerNames: f.schedulerNames})
	if err != nil {
		fmt.Fprintf(stderr, "playground snapshot: %v\n", err)
		return exitFailure
	}
	scope := "every namespace"
	if f.namespace != "" {
		scope = "namespace " + f.namespace
	}
	header := []string{
		fmt.Sprintf("Written by `playground snapshot` at %s: %d nodes%s of %s.",
			start.UTC().Format(time.RFC3339), len(s.Nodes), podCounts(f, s), scope),
		"Replay it with `playground --scenario FILE`, or name it as `base:` of a scenario.",
	}
	if f.includePending {
		header = append(header, "The pending pods are objects: the replay places each with its config's profile of the",
			"scheduler it named (annotation "+scenario.SnapshotSchedulerAnnotation+"), else its first; --explain says why.")
	}
	out, dest := stdout, "stdout"
	if f.outputFile != "" {
		file, err := os.Create(f.outputFile)
		if err != nil {
			fmt.Fprintf(stderr, "playground snapshot: %v\n", err)
			return exitFailure
		}
		defer file.Close()
		out, dest = file, f.outputFile
	}
	if err := snapshot.Write(out, s, header); err != nil {
		fmt.Fprintf(stderr, "playground snapshot: writing %s: %v\n", dest, err)
		return exitFailure
	}
	if file, ok := out.(*os.File); ok && f.outputFile != "" {
		if err := file.Close(); err != nil {
			fmt.Fprintf(stderr, "playground snapshot: writing %s: %v\n", dest, err)
			return exitFailure
		}
	}
	fmt.Fprintf(stderr, "wrote %d nodes%s to %s in %v\n", len(s.Nodes), podCounts(f, s), dest, time.Since(start).Round(time.Millisecond))
	return exitOK
}

// podCounts says how many pods s holds after its nodes: " and 11 bound
// pods", with --include-pending ", 11 bound pods and 1 pending pod".
func podCounts(f *snapshotFlags, s *scenario.Scenario) string {
	if !f.includePending {
		return fmt.Sprintf(" and %d bound pods", len(s.BoundPods))
	}
	pending := fmt.Sprintf("%d pending pods", len(s.Objects))
	if len(s.Objects) == 1 {
		pending = "1 pending pod"
	}
	return fmt.Sprintf(", %d bound pods and %s", len(s.BoundPods), pending)
}
