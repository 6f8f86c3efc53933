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
	"path/filepath"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/adminsched/scheduler-plugins/internal/playground"
	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
)

// testFile is one file to test, decoded once, and the configs it runs
// with: configs[0] the scenario's, then those of its samePlacementsAs.
type testFile struct {
	path    string
	file    *scenario.File
	configs []string
	// others maps a samePlacementsAs config as written to its index in
	// configs.
	others map[string]int
}

// loadTestFile reads a file and resolves its configs; an error is bad
// input.
func loadTestFile(path, configFlag string) (*testFile, error) {
	file, err := playground.LoadScenario(path, nil)
	if err != nil {
		return nil, err
	}
	s := file.Scenario
	if len(s.Expect) == 0 {
		return nil, &scenario.ValidationError{File: path, Errs: field.ErrorList{
			field.Required(field.NewPath("expect"), "playground test needs assertions: add expect: to the scenario (see examples/scenarios/README.md, Policy tests)")}}
	}
	relative := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(filepath.Dir(path), p)
	}
	t := &testFile{path: path, file: file, others: map[string]int{}}
	switch {
	case configFlag != "":
		t.configs = []string{configFlag}
	case s.Config != "":
		t.configs = []string{relative(s.Config)}
	default:
		t.configs = []string{defaultTestConf}
	}
	for _, a := range s.Expect {
		if a.SamePlacementsAs == nil {
			continue
		}
		c := relative(a.SamePlacementsAs.Config)
		i := slices.Index(t.configs[1:], c)
		if i < 0 {
			t.configs = append(t.configs, c)
			i = len(t.configs) - 2
		}
		t.others[a.SamePlacementsAs.Config] = i + 1
	}
	return t, nil
}
