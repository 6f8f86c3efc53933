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

package scenario

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// MaxDescheduleCycles caps a deschedule step: each cycle is a run of the
// descheduler and a wait for what it evicted to be placed again.
const MaxDescheduleCycles = 100

// DescheduleStep runs the descheduler's cycles, each on a settled
// cluster: the descheduler runs once with the run's policy (upstream's
// run-once mode, --descheduling-interval=0), evicts what its strategies
// pick, and every object is then waited for until its pods are made
// again and placed, before the next cycle. The run needs a descheduler
// policy (the scenario's descheduler, or --descheduler).
type DescheduleStep struct {
	// Cycles is how many times the descheduler runs, at least 1.
	Cycles int `json:"cycles"`
}

// String is the step as its progress line shows it.
func (d *DescheduleStep) String() string {
	if d.Cycles == 1 {
		return "deschedule 1 cycle"
	}
	return fmt.Sprintf("deschedule %d cycles", d.Cycles)
}

func validateDeschedule(d *DescheduleStep, p *field.Path) field.ErrorList {
	if d.Cycles < 1 || d.Cycles > MaxDescheduleCycles {
		return field.ErrorList{field.Invalid(p.Child("cycles"), d.Cycles, fmt.Sprintf("must be at least 1 and at most %d", MaxDescheduleCycles))}
	}
	return nil
}

// Deschedules reports whether a step of s is a deschedule step.
func (s *Scenario) Deschedules() bool {
	for _, st := range s.Steps {
		if st.Deschedule != nil {
			return true
		}
	}
	return false
}
