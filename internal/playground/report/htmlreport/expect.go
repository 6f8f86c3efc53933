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

// expectView is an expectation as the list at the top shows it.
type expectView struct {
	Expectation
	Link    string // id of the first pod block that broke it; "" for none
	LinkPod string
}

// podMark is an expectation's mark on a pod block it concerned.
type podMark struct {
	Label string // e0, e1, … by the expectation's place in the list
	Class string // pass; fail: the pod broke it; held: it failed, not by this pod
	Title string
}

// expectMarks marks the pods of the first run's final picture that each
// expectation concerned, by pod index, links each expectation to its
// first failing pod block, and says what is not marked. Only the first
// run is marked: it is the scenario's own config, the others are
// samePlacementsAs configs whose pods the expectations do not list.
func expectMarks(es []Expectation, runs []report.Run, compact bool) (views []expectView, marks map[int][]podMark, notes []string) {
	views = make([]expectView, len(es))
	listed := false
	for i, e := range es {
		views[i].Expectation = e
		listed = listed || len(e.Pods) > 0
	}
	if !listed || len(runs) == 0 {
		return views, nil, nil
	}
	if compact {
		return views, nil, []string{"The pods of each expectation are not marked: nodes are drawn as bars, without a block per pod."}
	}
	at := make(map[string]int, len(runs[0].Result.Pods))
	for i, p := range runs[0].Result.Pods {
		at[p.Namespace+"/"+p.Name] = i
	}
	marks = map[int][]podMark{}
	for i, e := range es {
		if e.At != "" {
			notes = append(notes, fmt.Sprintf("%s is about the pods %s: they are not marked on the picture, which shows the end.", e.Name, e.At))
			continue
		}
		if e.Other != "" {
			notes = append(notes, fmt.Sprintf("%s: its pods are marked under the scenario's own config only, not under %s.", e.Name, e.Other))
		}
		if e.MorePods > 0 {
			notes = append(notes, fmt.Sprintf("%s concerns %d more pods than are marked.", e.Name, e.MorePods))
		}
		title := e.Name + ": passed"
		if !e.Passed {
			title = e.Name + ": failed: " + e.Message
		}
		label := fmt.Sprintf("e%d", i)
		failing := make(map[string]bool, len(e.Failing))
		for _, name := range e.Failing {
			failing[name] = true
			if j, ok := at[name]; ok {
				marks[j] = append(marks[j], podMark{Label: label, Class: "fail", Title: title})
				if views[i].Link == "" {
					views[i].Link, views[i].LinkPod = podID(0, j), name
				}
			}
		}
		class := "pass"
		if !e.Passed {
			class = "held"
		}
		for _, name := range e.Pods {
			if j, ok := at[name]; ok && !failing[name] {
				marks[j] = append(marks[j], podMark{Label: label, Class: class, Title: title})
			}
		}
	}
	return views, marks, notes
}
