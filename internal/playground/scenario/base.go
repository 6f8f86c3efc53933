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
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/adminsched/scheduler-plugins/internal/yaml11"
)

// A scenario may name a base scenario (`base: cluster.yaml`, relative to the
// scenario's own file, or absolute), typically a `playground snapshot`: the
// base's nodes, bound pods, objects and steps come first, then the scenario's;
// its licenses are taken when the scenario has none (one of the two may have
// them). A base may not have a base itself, which also rules out cycles.

// merged is a scenario with its base merged in, and where each entry came
// from, so that validation errors name the file of the field.
type merged struct {
	scenario *Scenario
	// top is the scenario's file; base the base's, empty without one.
	top, base string
	// How many entries of each list come from the base: they come first.
	baseEntries map[string]int
	// licensesInBase: the licenses section is the base's (only one of the
	// two files may have one).
	licensesInBase bool
}

// mergeBase reads the base that s names, if any, relative to file, and
// returns s with the base's entries put first.
func mergeBase(file string, s *Scenario) (*merged, error) {
	m := &merged{scenario: s, top: file}
	if s.Base == "" {
		return m, nil
	}
	path := s.Base
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(file), path)
	}
	data, err := readScenarioFile(path)
	if err != nil {
		return nil, &ValidationError{File: file, Errs: field.ErrorList{field.Invalid(field.NewPath("base"), s.Base, err.Error())}}
	}
	if errs := yaml11.Check(data); len(errs) > 0 {
		return nil, &ValidationError{File: path, Errs: errs}
	}
	var b Scenario
	if err := unmarshalStrict(data, &b); err != nil {
		if other := notAScenario(path, data); other != nil {
			return nil, other
		}
		return nil, inFile(path, err)
	}
	if b.Base != "" {
		return nil, &ValidationError{File: path, Errs: field.ErrorList{field.Forbidden(field.NewPath("base"),
			fmt.Sprintf("%s is the base of %s: a base may not have a base itself", path, file))}}
	}
	if b.Licenses != nil && s.Licenses != nil {
		return nil, &ValidationError{File: file, Errs: field.ErrorList{field.Forbidden(field.NewPath("licenses"),
			fmt.Sprintf("the base %s declares licenses too: declare them in one of the two files", path))}}
	}
	m.base = path
	m.baseEntries = map[string]int{"nodes": len(b.Nodes), "boundPods": len(b.BoundPods), "objects": len(b.Objects), "steps": len(b.Steps)}
	m.licensesInBase = b.Licenses != nil
	licenses := s.Licenses
	if m.licensesInBase {
		licenses = b.Licenses
	}
	m.scenario = &Scenario{
		Nodes:       append(b.Nodes[:len(b.Nodes):len(b.Nodes)], s.Nodes...),
		BoundPods:   append(b.BoundPods[:len(b.BoundPods):len(b.BoundPods)], s.BoundPods...),
		Objects:     append(b.Objects[:len(b.Objects):len(b.Objects)], s.Objects...),
		Licenses:    licenses,
		Steps:       append(b.Steps[:len(b.Steps):len(b.Steps)], s.Steps...),
		Config:      s.Config,
		Descheduler: s.Descheduler,
		Expect:      s.Expect,
	}
	return m, nil
}

// entryPath matches a field path into one entry of a list: nodes[3].name.
var entryPath = regexp.MustCompile(`^(nodes|boundPods|objects|steps)\[(\d+)\](.*)$`)

// validationError splits the errors of the merged scenario by file: an
// error about an entry names the file and index the entry has there; an
// error about a whole list (a total over both files) names the scenario's
// own file.
func (m *merged) validationError(errs field.ErrorList) error {
	if m.base == "" {
		return &ValidationError{File: m.top, Errs: errs}
	}
	var baseErrs, topErrs field.ErrorList
	for _, e := range errs {
		match := entryPath.FindStringSubmatch(e.Field)
		if match == nil && m.licensesInBase && (e.Field == "licenses" || strings.HasPrefix(e.Field, "licenses.")) {
			baseErrs = append(baseErrs, e)
			continue
		}
		if match == nil {
			topErrs = append(topErrs, e)
			continue
		}
		i, _ := strconv.Atoi(match[2])
		n := m.baseEntries[match[1]]
		if i < n {
			baseErrs = append(baseErrs, e)
			continue
		}
		c := *e
		c.Field = fmt.Sprintf("%s[%d]%s", match[1], i-n, match[3])
		topErrs = append(topErrs, &c)
	}
	var out []error
	if len(baseErrs) > 0 {
		out = append(out, &ValidationError{File: m.base, Errs: baseErrs})
	}
	if len(topErrs) > 0 {
		out = append(out, &ValidationError{File: m.top, Errs: topErrs})
	}
	return errors.Join(out...)
}
