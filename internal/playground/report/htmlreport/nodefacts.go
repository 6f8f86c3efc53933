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

package htmlreport

import (
	"fmt"

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
)

// meterWidth is the width of a node's allocatable-use meter, as the
// template draws it.
const meterWidth = 50

// useView is one resource of a node as its meter shows it.
type useView struct {
	Name string // cpu, memory
	Text string // "cpu 1500m of 4000m requested"
	Pct  int    // requested of allocatable, may pass 100
	W    int    // the meter's filled width
}

// nodeLabels are a node's labels, to group the columns by.
func nodeLabels(n report.NodeResult) map[string]string { return n.Labels }

// facts sets what a column shows of its node beyond its pods: its
// allocatable use and what keeps pods off it (taints, conditions, a
// maintenance window).
func facts(nv *nodeView, n report.NodeResult) {
	nv.CPU = use("cpu", n.CPU, "%dm")
	nv.Memory = use("memory", report.Use{Requested: n.Memory.Requested >> 20, Allocatable: n.Memory.Allocatable >> 20}, "%dMi")
	nv.Marks = append(nv.Marks, n.Taints...)
	nv.Marks = append(nv.Marks, n.Conditions...)
	if n.Maintenance != "" {
		nv.Marks = append(nv.Marks, "maintenance window "+n.Maintenance)
	}
}

// use is nil when the node's allocatable is unknown (no facts, or a node
// a deleteNodes step removed).
func use(name string, u report.Use, unit string) *useView {
	if u.Allocatable <= 0 {
		return nil
	}
	pct := int(u.Requested * 100 / u.Allocatable)
	return &useView{
		Name: name,
		Text: fmt.Sprintf("%s "+unit+" of "+unit+" requested", name, u.Requested, u.Allocatable),
		Pct:  pct,
		W:    min(pct, 100) * meterWidth / 100,
	}
}
