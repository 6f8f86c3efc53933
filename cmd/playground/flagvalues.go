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
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/adminsched/scheduler-plugins/internal/didyoumean"
)

// Flag values that refuse what they cannot hold while the flags are parsed,
// so that pflag's error names the flag: `invalid argument "xml" for "-o,
// --output" flag: must be one of text, json, yaml`.

// oneOf is a string flag that takes one of values.
type oneOf struct {
	value  string
	values []string
}

func (o *oneOf) String() string { return o.value }
func (o *oneOf) Type() string   { return "string" }

func (o *oneOf) Set(s string) error {
	if !slices.Contains(o.values, s) {
		return fmt.Errorf("must be one of %s", strings.Join(o.values, ", "))
	}
	o.value = s
	return nil
}

// addOutputFlag adds -o/--output, text, json or yaml, to cmd, with their
// shell completion.
func addOutputFlag(cmd *cobra.Command, o *oneOf, usage string) {
	*o = oneOf{value: "text", values: []string{"text", "json", "yaml"}}
	cmd.Flags().VarP(o, "output", "o", usage)
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(o.values, cobra.ShellCompDirectiveNoFileComp))
}

// positiveDuration is a duration flag that must be above zero.
type positiveDuration time.Duration

func (d *positiveDuration) String() string { return time.Duration(*d).String() }
func (d *positiveDuration) Type() string   { return "duration" }

func (d *positiveDuration) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("not a duration (such as 90s or 2m): %w", err)
	}
	if v <= 0 {
		return fmt.Errorf("must be positive")
	}
	*d = positiveDuration(v)
	return nil
}

// atLeast is an integer flag with a lower bound.
type atLeast struct {
	value, min int64
}

func (a *atLeast) String() string { return strconv.FormatInt(a.value, 10) }
func (a *atLeast) Type() string   { return "int" }

func (a *atLeast) Set(s string) error {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("not an integer")
	}
	if v < a.min {
		return fmt.Errorf("must be at least %d", a.min)
	}
	a.value = v
	return nil
}

// suggestFlag is every command's flag error function: to an unknown flag it
// adds the flag meant, as cobra does for a mistyped command only:
// `unknown flag: --scenarios; did you mean --scenario?`. A long name
// written with one dash (-scenarios) fails as a shorthand and gets the
// same suggestion.
func suggestFlag(cmd *cobra.Command, err error) error {
	var notExist *pflag.NotExistError
	if !errors.As(err, &notExist) {
		return err
	}
	name := notExist.GetSpecifiedName()
	if short := notExist.GetSpecifiedShortnames(); short != "" {
		name, _, _ = strings.Cut(short, "=")
	}
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && f.Deprecated == "" {
			names = append(names, f.Name)
		}
	})
	if meant := didyoumean.Closest(name, names); meant != "" {
		return fmt.Errorf("%w; did you mean --%s?", err, meant)
	}
	return err
}
