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

// Command placement-admission reads a KubeSchedulerConfiguration, as
// kube-scheduler's --config reads it, and writes the PlacementPolicy rules of
// its profiles as MutatingAdmissionPolicies and bindings, for kubectl apply:
// every pod a rule applies to then carries the rule as node affinity from its
// creation, which autoscalers read.
//
//	placement-admission --config scheduler-config.yaml | kubectl apply -f -
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
