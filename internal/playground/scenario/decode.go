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

// Package scenario is the first step of the playground: it reads a scenario
// file (nodes, bound pods, Kubernetes objects of any kind, steps), merges its
// base, checks it and compiles it into a Plan of typed, defaulted objects
// that the apply step puts on a cluster. It is pure: no client, no cluster.
package scenario

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/adminsched/scheduler-plugins/internal/yaml11"
)

// Scenario is the content of a scenario file.
type Scenario struct {
	// Base names another scenario file, relative to this one, whose nodes,
	// bound pods and objects come before this one's (see base.go). Decode
	// merges it: a decoded Scenario has no Base.
	Base string `json:"base,omitempty"`
	// Nodes are created, ready, before the scheduler starts.
	Nodes []NodeSpec `json:"nodes"`
	// BoundPods are pods already running on the scenario's nodes, as
	// `playground snapshot` records them: created bound, in parallel, before
	// the scheduler starts, and not part of the result (see boundpods.go).
	BoundPods []BoundPod `json:"boundPods,omitempty"`
	// Objects are Kubernetes objects of any kind the cluster serves,
	// applied in order (Namespaces and CustomResourceDefinitions first); the
	// cluster's controllers make the workloads' pods. The kinds of the kind
	// table (kinds.go) are decoded and checked strictly here; any other is
	// checked by the API server when applied. Each object is waited for
	// until it is settled (every pod it wants exists and is bound or
	// unschedulable; a Job finished) before the next one is applied. A
	// Service has no pods: list it before the workload it selects, so that
	// the scheduler knows it when it scores that workload's pods.
	Objects []Object `json:"objects,omitempty"`
	// Licenses, when set, is a license server: the playground runs the
	// license driver's controller against it, which publishes its seats
	// before the objects are applied (see licenses.go).
	Licenses *Licenses `json:"licenses,omitempty"`
	// Steps run in order once every object is settled: scale a workload,
	// delete an object, wait, change the licenses checked out outside the
	// cluster. After each, every object is waited for again and the pods
	// per node are reported.
	Steps []Step `json:"steps,omitempty"`
	// Config is the KubeSchedulerConfiguration that `playground test` runs
	// the scenario with, relative to the scenario file (or absolute); its
	// --config overrides it. Plain runs take --config.
	Config string `json:"config,omitempty"`
	// Descheduler is the descheduler policy (a DeschedulerPolicy file)
	// that the deschedule steps run, relative to the scenario file (or
	// absolute); --descheduler overrides it, in plain runs and tests alike.
	Descheduler string `json:"descheduler,omitempty"`
	// Expect are the assertions `playground test` checks once the scenario
	// has run (see expect.go). A base's config and expect are not merged:
	// the scenario's own file states what it expects.
	Expect []Assertion `json:"expect,omitempty"`
}

// File is a scenario file decoded and checked: its base merged, every
// section validated except what depends on a scheduler config's profiles.
// Decode it once, then Plan it for each scheduler config.
type File struct {
	// Path names the file in errors, as given to Load or Decode.
	Path string
	// Scenario is the file as written, its base merged in.
	Scenario *Scenario

	// merged says which file each entry of Scenario comes from, so that
	// Plan's errors name it.
	merged *merged
	// objects are Scenario.Objects as validation decoded them, one each.
	objects []decoded
}

// Load reads a scenario file and decodes it (see Decode).
func Load(path string) (*File, error) {
	data, err := readScenarioFile(path)
	if err != nil {
		return nil, err
	}
	return Decode(path, data)
}

// Decode decodes data strictly (an unknown field is an error), merges
// its base if it names one (read relative to name's directory) and checks
// everything but the pods' scheduler names, which Plan checks against each
// scheduler config's profiles. name names the source in errors; with a
// base, each error names the file its field comes from.
func Decode(name string, data []byte) (*File, error) {
	if errs := yaml11.Check(data); len(errs) > 0 {
		return nil, &ValidationError{File: name, Errs: errs}
	}
	var s Scenario
	if err := unmarshalStrict(data, &s); err != nil {
		if other := notAScenario(name, data); other != nil {
			return nil, other
		}
		return nil, inFile(name, err)
	}
	merged, err := mergeBase(name, &s)
	if err != nil {
		return nil, err
	}
	objects, errs := validate(merged.scenario, nil)
	if len(errs) > 0 {
		return nil, merged.validationError(errs)
	}
	return &File{Path: name, Scenario: merged.scenario, merged: merged, objects: objects}, nil
}

// Plan checks f against schedulerNames, the profiles of the scheduler that
// will run it, and compiles it: pods may ask only for them, and the first
// is given to pods that name none. Empty skips both. Plan changes nothing
// in f, so that one File is planned once per scheduler config.
func (f *File) Plan(schedulerNames []string) (*Plan, error) {
	if errs := validateSchedulerNames(f.objects, schedulerNames); len(errs) > 0 {
		return nil, f.merged.validationError(errs)
	}
	return compile(f.Scenario, f.objects, schedulerNames)
}

// Validate returns every problem of s with its field path; it changes
// nothing. schedulerNames, when not empty, are the only scheduler names
// pods may ask for. It checks the sizes (MaxNodes, MaxPods) before it
// expands anything, so an oversized scenario is rejected without
// allocating for its size.
func Validate(s *Scenario, schedulerNames []string) field.ErrorList {
	_, errs := validate(s, schedulerNames)
	return errs
}

// validate is Validate that also returns the objects as it decoded them.
func validate(s *Scenario, schedulerNames []string) ([]decoded, field.ErrorList) {
	nodes := nodeSet(s.Nodes)
	errs := validateNodes(s.Nodes)
	errs = append(errs, validateBoundPods(s.BoundPods, nodes)...)
	objects, objErrs := decodeObjects(s.Objects, nodes, schedulerNames)
	errs = append(errs, objErrs...)
	errs = append(errs, validateAddedNodes(s.Steps, nodes)...)
	// Steps and assertions may name the nodes steps add.
	refs := scenarioRefs{objects: sets.New[string](), namespaces: sets.New[string](), nodes: withAddedNodes(nodes, s.Steps), steps: len(s.Steps)}
	for _, o := range objects {
		refs.objects.Insert(o.key())
		refs.namespaces.Insert(o.namespaces()...)
	}
	if len(objErrs) > 0 {
		// An object that did not decode may be the one named.
		refs.objects, refs.namespaces = nil, nil
	}
	errs = append(errs, validateLicenses(s.Licenses)...)
	errs = append(errs, validateSteps(s.Steps, refs.objects, refs.nodes, s.Licenses)...)
	return objects, append(errs, validateExpect(s.Expect, s.Config, refs)...)
}

// inFile prefixes err with file, each of its errors when it joins several
// (every unknown field of a file), so that each line names the file.
func inFile(file string, err error) error {
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return fmt.Errorf("%s: %w", file, err)
	}
	var errs []error
	for _, e := range joined.Unwrap() {
		errs = append(errs, fmt.Errorf("%s: %w", file, e))
	}
	return errors.Join(errs...)
}

// unmarshalStrict decodes YAML or JSON data into v with yaml.UnmarshalStrict.
// On unknown or duplicate fields, whose errors there name the field but not
// where it is, it returns sigs.k8s.io/json's errors instead, which give the
// path (`unknown field "nodes[0].bogus"`), and the field meant when one is
// close (`unknown field "nodes[0].lables"; did you mean "nodes[0].labels"?`).
func unmarshalStrict(data []byte, v interface{}) error {
	err := yaml.UnmarshalStrict(data, v)
	if err == nil {
		return nil
	}
	j, jerr := yaml.YAMLToJSON(data)
	if jerr != nil {
		return err
	}
	fresh := reflect.New(reflect.TypeOf(v).Elem()).Interface()
	if strictErrs, _ := kjson.UnmarshalStrict(j, fresh, kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields); len(strictErrs) > 0 {
		for i, e := range strictErrs {
			strictErrs[i] = withFieldSuggestion(reflect.TypeOf(v), e)
		}
		return errors.Join(strictErrs...)
	}
	return err
}

// ValidationError lists every problem of a scenario file.
type ValidationError struct {
	File string
	Errs field.ErrorList
}

func (e *ValidationError) Error() string {
	lines := make([]string, 0, len(e.Errs))
	for _, err := range e.Errs {
		lines = append(lines, fmt.Sprintf("%s: %v", e.File, err))
	}
	return strings.Join(lines, "\n")
}

// Invalid wraps an error of Load or Decode as one message: one problem on
// the line of "invalid scenario:", several as an indented list under their
// count, one per line.
func Invalid(err error) error {
	return &invalidError{err: err}
}

type invalidError struct{ err error }

func (e *invalidError) Unwrap() error { return e.err }

func (e *invalidError) Error() string {
	msg := e.err.Error()
	n := strings.Count(msg, "\n") + 1
	if n == 1 {
		return "invalid scenario: " + msg
	}
	return fmt.Sprintf("invalid scenario (%d problems):\n  %s", n, strings.ReplaceAll(msg, "\n", "\n  "))
}
