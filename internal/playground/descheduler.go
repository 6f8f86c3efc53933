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

package playground

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"github.com/adminsched/scheduler-plugins/internal/filelimit"
	"github.com/adminsched/scheduler-plugins/internal/playground/schedconfig"
)

// DeschedulerBinary is the descheduler's file name in the assets
// directory, where `make descheduler` builds it.
const DeschedulerBinary = "descheduler"

// policyEvictor is our evictor plugin: its args name the scheduler config
// the rules come from, which the playground sets to the one it runs.
const policyEvictor = "PolicyEvictor"

// Descheduler is the real descheduler (kubernetes-sigs/descheduler with
// our evictor plugin, bin/descheduler), run as a child process against
// the run's control plane by the scenario's deschedule steps. The root
// module never imports it.
type Descheduler struct {
	// Binary is its executable; empty is Assets/DeschedulerBinary.
	Binary string
	// Policy is the DeschedulerPolicy file (descheduler/v1alpha2); empty
	// is the scenario's descheduler field, relative to the scenario.
	Policy string
}

// deschedulerPolicy is the policy a run of opts gives the descheduler,
// or "" when its steps need none. It is an *InputError when the scenario
// has deschedule steps and no policy, or a policy and no such step.
func deschedulerPolicy(opts Options) (string, error) {
	s := opts.Scenario.Scenario
	policy := opts.Descheduler.Policy
	if policy == "" && s.Descheduler != "" {
		policy = s.Descheduler
		if !filepath.IsAbs(policy) {
			policy = filepath.Join(filepath.Dir(opts.Scenario.Path), policy)
		}
	}
	switch {
	case policy == "" && s.Deschedules():
		return "", &InputError{Err: errors.New("the scenario's deschedule steps need a descheduler policy: give --descheduler POLICY, or descheduler: in the scenario")}
	case policy != "" && !s.Deschedules():
		return "", &InputError{Err: fmt.Errorf("descheduler policy %s: the scenario has no deschedule step, which is when the descheduler runs: add one, e.g. `- deschedule: {cycles: 3}` after the nodes join", policy)}
	}
	return policy, nil
}

// readPolicy reads the policy file and decodes it as a YAML map, checking
// its kind; the descheduler checks the rest when it loads it.
func readPolicy(path string) (map[string]any, error) {
	data, err := filelimit.Read(path, schedconfig.MaxBytes, "descheduler policy")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &InputError{Err: fmt.Errorf("descheduler policy %s: no such file", path)}
		}
		return nil, &InputError{Err: err}
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &InputError{Err: fmt.Errorf("descheduler policy %s: %w", path, err)}
	}
	if doc["apiVersion"] != "descheduler/v1alpha2" || doc["kind"] != "DeschedulerPolicy" {
		return nil, &InputError{Err: fmt.Errorf("descheduler policy %s: want apiVersion descheduler/v1alpha2 and kind DeschedulerPolicy, got %v and %v", path, doc["apiVersion"], doc["kind"])}
	}
	return doc, nil
}

// deschedulerBinary is the binary of opts' descheduler, or an
// *AssetsError saying how to get it.
func deschedulerBinary(opts Options) (string, error) {
	bin := opts.Descheduler.Binary
	if bin == "" {
		bin = filepath.Join(opts.Assets, DeschedulerBinary)
	}
	if info, err := os.Stat(bin); err != nil || info.IsDir() {
		return "", &AssetsError{Err: fmt.Errorf("the descheduler %s is missing: build it with `make descheduler` (or give --descheduler-binary)", bin)}
	}
	return bin, nil
}

// checkDeschedulerBinary checks that the descheduler of opts is there
// when its steps need it.
func checkDeschedulerBinary(opts Options) error {
	if policy, err := deschedulerPolicy(opts); err != nil || policy == "" {
		return err
	}
	_, err := deschedulerBinary(opts)
	return err
}

// checkDescheduler checks the policy of opts (nil when none is needed).
func checkDescheduler(opts Options) error {
	policy, err := deschedulerPolicy(opts)
	if err != nil || policy == "" {
		return err
	}
	_, err = readPolicy(policy)
	return err
}

// prepareDescheduler writes the policy as the run's descheduler reads it
// into the run's directory, beside sc's copy, and returns the descheduler
// of the run, or nil when the scenario has no deschedule step.
//
// Each PolicyEvictor of the policy gets schedulerConfig: sc.Path, the
// config the run's scheduler reads: on a cluster that arg is the path of
// the mounted scheduler ConfigMap, here it is always the one that runs,
// so that a shipped policy runs unchanged.
func prepareDescheduler(opts Options, sc *schedconfig.Config) (*descheduler, error) {
	policy, err := deschedulerPolicy(opts)
	if err != nil || policy == "" {
		return nil, err
	}
	bin, err := deschedulerBinary(opts)
	if err != nil {
		return nil, err
	}
	doc, err := readPolicy(policy)
	if err != nil {
		return nil, err
	}
	profiles, _ := doc["profiles"].([]any)
	for _, p := range profiles {
		profile, _ := p.(map[string]any)
		configs, _ := profile["pluginConfig"].([]any)
		for _, c := range configs {
			pc, _ := c.(map[string]any)
			if pc["name"] != policyEvictor {
				continue
			}
			args, ok := pc["args"].(map[string]any)
			if !ok {
				args = map[string]any{}
				pc["args"] = args
			}
			args["schedulerConfig"] = sc.Path
		}
	}
	data, err := yaml.Marshal(doc)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(sc.Path)
	d := &descheduler{binary: bin, source: policy, policy: filepath.Join(dir, "descheduler-policy.yaml"), kubeconfig: sc.Kubeconfig, log: filepath.Join(dir, "descheduler.log")}
	return d, os.WriteFile(d.policy, data, 0o600)
}
