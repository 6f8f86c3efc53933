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
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"

	"github.com/adminsched/scheduler-plugins/internal/filelimit"
	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
	"github.com/adminsched/scheduler-plugins/internal/playground/snapshot"
)

const snapshotUsage = `Usage: playground snapshot [flags]

Writes a scenario of a live cluster: its nodes (name, labels, taints,
allocatable cpu, memory and pods, unschedulable, and the annotation
scheduling.adminsched.io/maintenance-window only) and its bound pods that
are not Succeeded or Failed (namespace, name, node, labels, controller
owner, priority and container requests only: no images, env, volumes,
secrets or annotations). Replay it with
  playground --scenario FILE
or name it as the base of a scenario that adds workloads:
  base: cluster.yaml

Flags:
`

type snapshotFlags struct {
	kubeconfig, context, namespace, outputFile string
	allNamespaces                              bool
	pageSize                                   int64
	verbosity                                  int
}

func parseSnapshotFlags(args []string, stderr io.Writer) (*snapshotFlags, int) {
	f := &snapshotFlags{}
	fs := flag.NewFlagSet("playground snapshot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), snapshotUsage)
		fs.PrintDefaults()
	}
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (default: $KUBECONFIG, else ~/.kube/config)")
	fs.StringVar(&f.context, "context", "", "kubeconfig context (default: the current context)")
	fs.StringVar(&f.namespace, "namespace", "", "record the pods of this namespace only (nodes are always all recorded)")
	fs.BoolVar(&f.allNamespaces, "all-namespaces", true, "record the pods of every namespace (the default unless --namespace is given)")
	fs.StringVar(&f.outputFile, "output-file", "", "where to write the scenario (default: stdout)")
	fs.Int64Var(&f.pageSize, "page-size", 500, "objects per list request")
	fs.IntVar(&f.verbosity, "v", 0, "log verbosity (logs go to stderr)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, exitOK
		}
		return nil, exitInput
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "playground snapshot: unexpected arguments %q\n", fs.Args())
		return nil, exitInput
	}
	allSet := false
	fs.Visit(func(fl *flag.Flag) { allSet = allSet || fl.Name == "all-namespaces" })
	if f.namespace != "" {
		if allSet && f.allNamespaces {
			fmt.Fprintln(stderr, "playground snapshot: --namespace and --all-namespaces exclude each other")
			return nil, exitInput
		}
		f.allNamespaces = false
	} else if !f.allNamespaces {
		fmt.Fprintln(stderr, "playground snapshot: --all-namespaces=false needs --namespace")
		return nil, exitInput
	}
	if f.pageSize < 1 {
		fmt.Fprintln(stderr, "playground snapshot: --page-size must be at least 1")
		return nil, exitInput
	}
	return f, exitOK
}

// maxKubeconfigBytes caps the kubeconfig files `playground snapshot` reads:
// one with the certificates of a hundred clusters embedded is well under
// 1 MiB.
const maxKubeconfigBytes = 16 << 20

// runSnapshot is `playground snapshot`.
func runSnapshot(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, code := parseSnapshotFlags(args, stderr)
	if f == nil {
		return code
	}
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
	s, err := snapshot.Take(ctx, client, snapshot.Options{Namespace: f.namespace, PageSize: f.pageSize, Progress: stderr})
	if err != nil {
		fmt.Fprintf(stderr, "playground snapshot: %v\n", err)
		return exitFailure
	}
	scope := "every namespace"
	if f.namespace != "" {
		scope = "namespace " + f.namespace
	}
	header := []string{
		fmt.Sprintf("Written by `playground snapshot` at %s: %d nodes, %d bound pods of %s.",
			start.UTC().Format(time.RFC3339), len(s.Nodes), len(s.BoundPods), scope),
		"Replay it with `bin/playground --scenario FILE`, or name it as `base:` of a scenario.",
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
	if err := scenario.Write(out, s, header); err != nil {
		fmt.Fprintf(stderr, "playground snapshot: writing %s: %v\n", dest, err)
		return exitFailure
	}
	if file, ok := out.(*os.File); ok && f.outputFile != "" {
		if err := file.Close(); err != nil {
			fmt.Fprintf(stderr, "playground snapshot: writing %s: %v\n", dest, err)
			return exitFailure
		}
	}
	fmt.Fprintf(stderr, "wrote %d nodes and %d bound pods to %s in %v\n", len(s.Nodes), len(s.BoundPods), dest, time.Since(start).Round(time.Millisecond))
	return exitOK
}
