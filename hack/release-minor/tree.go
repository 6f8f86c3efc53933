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
	"bytes"
	"errors"
	"fmt"
	"go/build/constraint"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// minorTag is the build tag of an older minor's files.
var minorTag = regexp.MustCompile(`^kube1\.[0-9]+$`)

// modFile matches the module files of the older minors.
var modFile = regexp.MustCompile(`^go\.1\.[0-9]+\.(mod|sum)$`)

type changes struct{ dropped, untagged int }

// chart is the Helm chart whose versions follow the release's.
const chart = "manifests/install/charts/adminsched-scheduler/Chart.yaml"

// rewrite makes dir, a copy of the tree, the release tree of minor, for the
// release version (v0.<minor>.<patch>).
func rewrite(dir, minor, version string) (changes, error) {
	var c changes
	if !regexp.MustCompile(`^1\.[0-9]+$`).MatchString(minor) {
		return c, fmt.Errorf("--minor %q: want a Kubernetes minor such as 1.36", minor)
	}
	tag := "kube" + minor
	n, _ := strconv.Atoi(strings.TrimPrefix(minor, "1."))
	if !regexp.MustCompile(fmt.Sprintf(`^v0\.%d\.[0-9]+$`, n)).MatchString(version) {
		return c, fmt.Errorf("--version %q: a release of Kubernetes %s is v0.%d.<patch>", version, minor, n)
	}
	mod := filepath.Join(dir, "go."+minor+".mod")
	if _, err := os.Stat(mod); err != nil {
		return c, fmt.Errorf("%s has no go.%s.mod: this tree does not build Kubernetes %s (%w)", dir, minor, minor, err)
	}
	for _, ext := range []string{"mod", "sum"} {
		if err := os.Rename(filepath.Join(dir, "go."+minor+"."+ext), filepath.Join(dir, "go."+ext)); err != nil {
			return c, err
		}
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return nil
		case filepath.Dir(path) == filepath.Clean(dir) && modFile.MatchString(d.Name()):
			return os.Remove(path)
		case strings.HasSuffix(d.Name(), ".go"):
			return retag(path, tag, &c)
		}
		return nil
	})
	if err != nil {
		return c, err
	}
	if err := setNewestMinor(filepath.Join(dir, "Makefile"), minor); err != nil {
		return c, err
	}
	return c, setChartVersions(filepath.Join(dir, chart), n, version)
}

// setChartVersions makes the chart that of version: its own version and
// appVersion, the kube-apiserver minors the skew policy allows for a
// scheduler of minor n (n and n+1), and the minor its description names.
func setChartVersions(path string, n int, version string) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for _, r := range []struct{ re, repl string }{
		{`(?m)^version: .*$`, "version: " + strings.TrimPrefix(version, "v")},
		{`(?m)^appVersion: .*$`, fmt.Sprintf("appVersion: %q", version)},
		{`(?m)^kubeVersion: .*$`, fmt.Sprintf("kubeVersion: \">=1.%d.0-0 <1.%d.0-0\"", n, n+2)},
		{`\(v1\.[0-9]+ with`, fmt.Sprintf("(v1.%d with", n)},
	} {
		re := regexp.MustCompile(r.re)
		if !re.Match(src) {
			return fmt.Errorf("%s: no line matches %s", path, r.re)
		}
		src = re.ReplaceAll(src, []byte(r.repl))
	}
	return os.WriteFile(path, src, 0o644)
}

// retag drops the file at path when its minor constraint excludes tag, and
// removes the constraint when it keeps the file. A constraint that mixes a
// minor's tag with other tags is refused: it could not be evaluated here.
func retag(path, tag string, c *changes) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	line, expr, ok := buildConstraint(src)
	if !ok {
		return nil
	}
	minorOnly := true
	mentionsMinor := false
	expr.Eval(func(t string) bool {
		if minorTag.MatchString(t) {
			mentionsMinor = true
		} else {
			minorOnly = false
		}
		return false
	})
	if !mentionsMinor {
		return nil
	}
	if !minorOnly {
		return fmt.Errorf("%s: the constraint %q mixes a minor's tag with other tags", path, line)
	}
	if !expr.Eval(func(t string) bool { return t == tag }) {
		c.dropped++
		return os.Remove(path)
	}
	c.untagged++
	out := bytes.Replace(src, []byte(line+"\n\n"), nil, 1)
	if len(out) == len(src) {
		out = bytes.Replace(src, []byte(line+"\n"), nil, 1)
	}
	return os.WriteFile(path, out, 0o644)
}

// buildConstraint returns the file's //go:build line and its expression.
func buildConstraint(src []byte) (string, constraint.Expr, bool) {
	for _, line := range strings.Split(string(src), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "package ") {
			break
		}
		if constraint.IsGoBuild(line) {
			expr, err := constraint.Parse(line)
			if err != nil {
				return "", nil, false
			}
			return line, expr, true
		}
	}
	return "", nil, false
}

// setNewestMinor makes minor the Makefile's newest and only minor.
func setNewestMinor(makefile, minor string) error {
	src, err := os.ReadFile(makefile)
	if err != nil {
		return err
	}
	newest := regexp.MustCompile(`(?m)^NEWEST_MINOR := .*$`)
	older := regexp.MustCompile(`(?m)^OLDER_MINORS := .*$`)
	if !newest.Match(src) || !older.Match(src) {
		return errors.New(makefile + " has no NEWEST_MINOR or OLDER_MINORS line")
	}
	src = newest.ReplaceAll(src, []byte("NEWEST_MINOR := "+minor))
	src = older.ReplaceAll(src, []byte("OLDER_MINORS :="))
	return os.WriteFile(makefile, src, 0o644)
}
