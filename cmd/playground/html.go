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
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
	"github.com/adminsched/scheduler-plugins/internal/playground/report/htmlreport"
)

// defaultGroupBy is the node label that the HTML report groups node
// columns by unless --html-group-by says otherwise.
const defaultGroupBy = "topology.kubernetes.io/zone"

const groupByUsage = "with --html, group the report's node columns by each node's value of the label `LABEL`; empty: no grouping"

// noDash refuses "-": the HTML report is a file next to the text or JSON
// output, which keeps stdout.
func noDash(s string) error {
	switch s {
	case "-":
		return errors.New(`the report is a file, not stdout ("-"): stdout keeps the text or JSON output`)
	case "":
		return errors.New("must not be empty")
	}
	return nil
}

// htmlFile is --html of a run: a file whose directory exists, so that a
// wrong path fails before the run rather than after it.
type htmlFile string

func (h *htmlFile) String() string { return string(*h) }
func (h *htmlFile) Type() string   { return "file" }

func (h *htmlFile) Set(s string) error {
	if err := noDash(s); err != nil {
		return err
	}
	if fi, err := os.Stat(filepath.Dir(s)); err != nil || !fi.IsDir() {
		return fmt.Errorf("its directory %s does not exist: create it first", filepath.Dir(s))
	}
	if fi, err := os.Stat(s); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory: give a file", s)
	}
	*h = htmlFile(s)
	return nil
}

// htmlDir is --html of playground test: a directory, made if missing.
type htmlDir string

func (h *htmlDir) String() string { return string(*h) }
func (h *htmlDir) Type() string   { return "dir" }

func (h *htmlDir) Set(s string) error {
	if err := noDash(s); err != nil {
		return err
	}
	if fi, err := os.Stat(s); err == nil && !fi.IsDir() {
		return fmt.Errorf("%s is a file: give a directory", s)
	}
	*h = htmlDir(s)
	return nil
}

// addGroupByFlag adds --html-group-by to cmd.
func addGroupByFlag(cmd *cobra.Command, groupBy *string) {
	cmd.Flags().StringVar(groupBy, "html-group-by", defaultGroupBy, groupByUsage)
}

// pageTitle is the report's title for a scenario file: its base name
// (the built-in tutorial's too).
func pageTitle(scenarioFile string) string {
	return filepath.Base(strings.TrimSuffix(scenarioFile, builtinSuffix))
}

// writeHTML writes the report p to path (0644, as a file to share) and
// says so on stderr.
func writeHTML(path string, p htmlreport.Page, stderr io.Writer) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := htmlreport.Write(w, p); err != nil {
		_ = f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "HTML report: %s\n", path)
	return nil
}

// runPage is the report of a run: the same runs the text and JSON
// output show.
func runPage(scenarioFile, groupBy string, runs []report.Run) htmlreport.Page {
	return htmlreport.Page{Title: pageTitle(scenarioFile), Runs: runs, GroupBy: groupBy}
}
