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

package clusterbin

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The test binary stands in for the go command when FAKE_GO_CALLS is set:
// Ensure runs it as opts.Go. It appends each call (arguments and the
// environment that matters) to the file FAKE_GO_CALLS names, and "builds" a
// shell script that prints a version.
const (
	fakeCallsEnv = "FAKE_GO_CALLS"
	// fakeFailEnv names a package whose build fails.
	fakeFailEnv = "FAKE_GO_FAIL"
	// fakeDelayEnv is how long each build takes.
	fakeDelayEnv = "FAKE_GO_DELAY"
	// fakeMoveEnv makes a -mod=mod build add a requirement to go.mod.
	fakeMoveEnv = "FAKE_GO_MOVE"
)

func TestMain(m *testing.M) {
	if calls := os.Getenv(fakeCallsEnv); calls != "" {
		os.Exit(fakeGo(calls, os.Args[1:]))
	}
	os.Exit(m.Run())
}

func fakeGo(calls string, args []string) int {
	wd, _ := os.Getwd()
	f, err := os.OpenFile(calls, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Fprintf(f, "%s\tGOFLAGS=%s GOWORK=%s module=%s\n", strings.Join(args, " "), os.Getenv("GOFLAGS"), os.Getenv("GOWORK"), filepath.Base(wd))
	_ = f.Close()
	switch {
	case len(args) == 2 && args[0] == "env" && args[1] == "GOVERSION":
		fmt.Println("go1.99.0")
		return 0
	case len(args) >= 4 && args[0] == "build" && args[1] == "-o":
		pkg := args[len(args)-1]
		if d, err := time.ParseDuration(os.Getenv(fakeDelayEnv)); err == nil {
			time.Sleep(d)
		}
		fmt.Fprintf(os.Stderr, "compiling %s\n", pkg)
		if pkg == os.Getenv(fakeFailEnv) {
			fmt.Fprintf(os.Stderr, "%s: fake compile error\n", pkg)
			return 1
		}
		if os.Getenv(fakeMoveEnv) != "" && strings.Contains(strings.Join(args, " "), "-mod=mod") {
			mod, _ := os.ReadFile("go.mod")
			_ = os.WriteFile("go.mod", append(mod, "\nrequire example.com/moved v1.0.0\n"...), 0o644)
		}
		script := fmt.Sprintf("#!/bin/sh\necho %s version fake\n", filepath.Base(pkg))
		if err := os.WriteFile(args[2], []byte(script), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	fmt.Fprintf(os.Stderr, "fake go: unexpected arguments %q\n", args)
	return 2
}

// fakeGoCalls is what the fake go command has been asked to do so far.
func fakeGoCalls(t *testing.T, calls string) []string {
	t.Helper()
	data, err := os.ReadFile(calls)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// builds are the packages of the go build calls among calls.
func builds(calls []string) []string {
	var pkgs []string
	for _, c := range calls {
		args, _, _ := strings.Cut(c, "\t")
		if f := strings.Fields(args); len(f) > 0 && f[0] == "build" {
			pkgs = append(pkgs, f[len(f)-1])
		}
	}
	return pkgs
}
