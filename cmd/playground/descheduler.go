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
	"github.com/spf13/cobra"

	"github.com/adminsched/scheduler-plugins/internal/playground"
)

// deschedulerFlags are --descheduler and --descheduler-binary, of run and
// test.
type deschedulerFlags struct {
	policy, binary string
}

const deschedulerUsage = "DeschedulerPolicy file (descheduler/v1alpha2) for the scenario's deschedule steps, instead of the scenario's descheduler: field; each step runs the real descheduler (bin/descheduler: kubernetes-sigs/descheduler with our PolicyEvictor) once per cycle against the run's cluster, its log in the run's directory. A PolicyEvictor's schedulerConfig is set to the config the run's scheduler reads"

const deschedulerBinaryUsage = "the descheduler's binary; if not given, descheduler in the assets directory (bin/descheduler: make descheduler builds it)"

func (f *deschedulerFlags) add(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.policy, "descheduler", "", deschedulerUsage)
	fs.StringVar(&f.binary, "descheduler-binary", "", deschedulerBinaryUsage)
	_ = cmd.MarkFlagFilename("descheduler", "yaml", "yml", "json")
	_ = cmd.MarkFlagFilename("descheduler-binary")
}

func (f *deschedulerFlags) options() playground.Descheduler {
	return playground.Descheduler{Policy: f.policy, Binary: f.binary}
}
