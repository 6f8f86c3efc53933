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

// Package schedconfig reads a KubeSchedulerConfiguration as kube-scheduler
// would, refuses what kube-scheduler would refuse or silently ignore (args
// of a plugin it lacks or does not enable, a scenario given in its place),
// and rewrites a copy for a run: the run's kubeconfig, no leader election.
package schedconfig

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	"sigs.k8s.io/yaml"

	pluginvalidation "github.com/adminsched/scheduler-plugins/apis/config/validation"
	"github.com/adminsched/scheduler-plugins/internal/filelimit"
	"github.com/adminsched/scheduler-plugins/internal/pluginnames"
)

// MaxBytes caps a scheduler config file: 1 MiB is the most a ConfigMap,
// where a scheduler's config usually lives, holds.
const MaxBytes = 1 << 20

// Rewrite returns a KubeSchedulerConfiguration document with
// clientConnection.kubeconfig set to kubeconfig and leader election off, the
// rest unchanged. It edits the decoded document, not the text; numbers keep
// their digits (a float64 round trip would turn 9223372036854775807 into
// 9223372036854776000, which no int64 field takes).
func Rewrite(data []byte, kubeconfig string) ([]byte, error) {
	var doc map[string]interface{}
	useNumber := func(d *json.Decoder) *json.Decoder { d.UseNumber(); return d }
	if err := yaml.Unmarshal(data, &doc, useNumber); err != nil {
		return nil, err
	}
	if doc == nil {
		return nil, fmt.Errorf("empty document")
	}
	setField(doc, "clientConnection", "kubeconfig", kubeconfig)
	setField(doc, "leaderElection", "leaderElect", false)
	return yaml.Marshal(doc)
}

// setField sets doc[section][key], making section a map when it is missing
// or not one.
func setField(doc map[string]interface{}, section, key string, value interface{}) {
	m, ok := doc[section].(map[string]interface{})
	if !ok {
		m = map[string]interface{}{}
		doc[section] = m
	}
	m[key] = value
}

// Config is a scheduler config file made ready for one run.
type Config struct {
	// Source is the file the user gave.
	Source string
	// Path is the copy the scheduler reads: it points at Kubeconfig and
	// has leader election off.
	Path string
	// Kubeconfig is where the run writes the control plane's kubeconfig.
	Kubeconfig string
	// Profiles are the config's scheduler names, the first being the
	// default for pods that name none.
	Profiles []string
	// Loaded is the config as the scheduler loads it.
	Loaded *config.KubeSchedulerConfiguration
}

// Read reads the scheduler config source: the built-in file of that name
// if there is one, else the file, up to MaxBytes. A file's error wraps the
// reader's, fs.ErrNotExist included, for the caller to explain.
func Read(source string, builtin map[string][]byte) ([]byte, error) {
	if data, ok := builtin[source]; ok {
		return data, nil
	}
	data, err := filelimit.Read(source, MaxBytes, "scheduler config file")
	if err != nil {
		return nil, fmt.Errorf("scheduler config: %w", err)
	}
	return data, nil
}

// Prepare writes the copy of source (data, its bytes) for a run in dir
// and validates it the way kube-scheduler does (decoding, defaulting,
// validation), plus our plugins' args, so that a mistake stops the
// playground before anything starts. Every error names source.
//
// The file as given is loaded first, with the function kube-scheduler's
// --config uses (options.LoadConfigFromFile: the scheme's strict decoder),
// so the playground accepts and refuses exactly what the binary would, a
// repeated key included; only then is the copy made, and loaded the same way
// by the scheduler.
func Prepare(logger klog.Logger, source string, data []byte, dir string) (*Config, error) {
	if err := notAConfig(source, data); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	sc := &Config{
		Source:     source,
		Path:       filepath.Join(dir, "scheduler-config.yaml"),
		Kubeconfig: filepath.Join(dir, "kubeconfig"),
	}
	// The bytes read, verbatim, so that the loader sees what was checked.
	given := filepath.Join(dir, "scheduler-config.given.yaml")
	if err := os.WriteFile(given, data, 0o600); err != nil {
		return nil, err
	}
	if _, err := options.LoadConfigFromFile(logger, given); err != nil {
		return nil, fmt.Errorf("scheduler config %s: %w", source, err)
	}
	out, err := Rewrite(data, sc.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("scheduler config %s: %w", source, err)
	}
	if err := os.WriteFile(sc.Path, out, 0o600); err != nil {
		return nil, err
	}
	cfg, err := options.LoadConfigFromFile(logger, sc.Path)
	if err != nil {
		return nil, fmt.Errorf("scheduler config %s (the playground's copy %s): %w", source, sc.Path, err)
	}
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		return nil, fmt.Errorf("scheduler config %s: %w", source, err)
	}
	// The file as written (it decoded strictly above), for the field paths.
	var written configv1.KubeSchedulerConfiguration
	if err := yaml.Unmarshal(data, &written); err != nil {
		return nil, fmt.Errorf("scheduler config %s: %w", source, err)
	}
	if errs := pluginnames.Check(&written, pluginnames.Known()); len(errs) > 0 {
		return nil, fmt.Errorf("scheduler config %s: %w", source, errs.ToAggregate())
	}
	sc.Loaded = cfg
	for i, prof := range cfg.Profiles {
		sc.Profiles = append(sc.Profiles, prof.SchedulerName)
		for j, pc := range prof.PluginConfig {
			path := field.NewPath("profiles").Index(i).Child("pluginConfig").Index(j).Child("args")
			if err := pluginvalidation.ValidatePluginArgs(path, pc.Name, pc.Args); err != nil {
				return nil, fmt.Errorf("scheduler config %s: %w", source, err)
			}
		}
	}
	// After the args: a plugin left out with bad args is told about those.
	if errs := unreadArgs(data); len(errs) > 0 {
		return nil, fmt.Errorf("scheduler config %s: %w", source, errs.ToAggregate())
	}
	return sc, nil
}

// unreadArgs refuses the pluginConfig entries of plugins their profile
// does not enable (Check has refused the names of no plugin):
// kube-scheduler drops their args without a word, where our binary only
// warns, and the run would not be the one meant.
func unreadArgs(data []byte) field.ErrorList {
	cfg, err := pluginnames.DecodeDefaulted(data)
	if err != nil {
		return nil // the loader, which ran first, accepted it
	}
	var errs field.ErrorList
	for _, u := range pluginnames.FindUnused(cfg, pluginnames.Known()) {
		if u.Known {
			errs = append(errs, field.Invalid(u.Path.Child("name"), u.Name,
				u.Reason()+", so kube-scheduler ignores these args: enable the plugin or remove the entry"))
		}
	}
	return errs
}
