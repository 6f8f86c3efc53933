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
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// versionInfo is what `playground version` prints, read from the build
// information the Go toolchain writes into every binary.
type versionInfo struct {
	// Playground is the main module's version: a tag when installed with
	// go install ...@version, "(devel)" when built from a checkout.
	Playground string `json:"playground"`
	// Revision is the commit it was built from, with "-dirty" if the
	// checkout had changes; empty when the toolchain did not record it.
	Revision string `json:"revision,omitempty"`
	// Kubernetes is the version of k8s.io/kubernetes it is built from: its
	// scheduler, and the control plane it builds.
	Kubernetes string `json:"kubernetes"`
	// Go is the toolchain that built it, and Platform the target.
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// readVersion reads the build information of the running binary.
func readVersion() versionInfo {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(bi)
}

// versionOf is the versionInfo of bi, which may be nil (a binary built
// without module support).
func versionOf(bi *debug.BuildInfo) versionInfo {
	v := versionInfo{Playground: "unknown", Kubernetes: "unknown", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		return v
	}
	if bi.Main.Version != "" {
		v.Playground = bi.Main.Version
	}
	if bi.GoVersion != "" {
		v.Go = bi.GoVersion
	}
	for _, d := range bi.Deps {
		if d.Path == "k8s.io/kubernetes" {
			v.Kubernetes = d.Version
			if d.Replace != nil && d.Replace.Version != "" {
				v.Kubernetes = d.Replace.Version
			}
		}
	}
	goos, goarch, modified := runtime.GOOS, runtime.GOARCH, false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		case "GOOS":
			goos = s.Value
		case "GOARCH":
			goarch = s.Value
		}
	}
	v.Platform = goos + "/" + goarch
	if modified && v.Revision != "" {
		v.Revision += "-dirty"
	}
	return v
}

// short is the one line of --version.
func (v versionInfo) short() string {
	s := fmt.Sprintf("playground %s, Kubernetes %s, %s %s", v.Playground, v.Kubernetes, v.Go, v.Platform)
	if v.Revision != "" {
		s += ", commit " + v.Revision
	}
	return s
}

func (v versionInfo) write(w io.Writer, format string) error {
	switch format {
	case "json":
		out, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", out)
		return err
	case "yaml":
		out, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(out)
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Playground: %s\n", v.Playground)
	if v.Revision != "" {
		fmt.Fprintf(&b, "Commit: %s\n", v.Revision)
	}
	fmt.Fprintf(&b, "Kubernetes: %s\nGo: %s %s\n", v.Kubernetes, v.Go, v.Platform)
	_, err := io.WriteString(w, b.String())
	return err
}

func newVersionCommand() *cobra.Command {
	var output oneOf
	cmd := &cobra.Command{
		Use:   "version [flags]",
		Short: "Print the playground's version, the Kubernetes it is built from and Go's",
		Example: `  # For scripts
  playground version -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := readVersion().write(cmd.OutOrStdout(), output.value); err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: %v\n", cmd.CommandPath(), err)
				return exitCode(exitFailure)
			}
			return nil
		},
	}
	addOutputFlag(cmd, &output, "output format: text, json or yaml")
	return cmd
}
