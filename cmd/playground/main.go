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

// Command playground runs our scheduler end to end on an embedded control
// plane (etcd, kube-apiserver, kube-controller-manager and KWOK): it creates
// a scenario's nodes and objects, whose controllers make the pods, runs its
// steps, waits for the scheduler and shows where every pod landed. Its
// default scenario and scheduler config are built in, so it runs from any
// folder; the binaries come from --assets, $KUBEBUILDER_ASSETS or ./bin, else
// it builds them once into the user's cache.
//
//	playground [run] [--scenario FILE] [--config FILE] [--compare FILE]
//	               [-o text|json|yaml] [--timeout 1m0s] [--keep] [--assets DIR]
//	               [--explain [--explain-nodes 5]] [--karpenter] [--admission-policies]
//	               [--kube-minor 1.36]
//
// The snapshot command writes a scenario of a live cluster (its nodes and
// bound pods, see examples/scenarios/README.md) to replay, or to name as the
// base of a scenario:
//
//	playground snapshot [--kubeconfig FILE] [--context NAME]
//	               [-n NS | -A] [--output-file FILE]
//
// The test command runs scenarios that carry expect: assertions (policy
// tests) and exits non-zero when one fails; it can write JUnit XML:
//
//	playground test [--config FILE] [--junit FILE] [--timeout 1m0s] FILE...
//
// The version command (and --version) prints the playground's version, the
// Kubernetes it is built from and Go's. `playground <command> --help` gives
// every flag, with examples.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first Ctrl-C, a second one kills the process.
		<-ctx.Done()
		stop()
	}()
	code := execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
