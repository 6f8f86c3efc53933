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
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/adminsched/scheduler-plugins/internal/playground"
)

// keepBanner is what --keep prints once the cluster is up for the user:
// which pods which scheduler takes, and the commands of another shell, the
// export line alone on its line (so that a script can apply it).
func keepBanner(s *playground.Session, assets string) string {
	var b strings.Builder
	if s.ShareController {
		b.WriteString("\nthe control plane, the scheduler and the OnDemandShare controller stay up until Ctrl-C.\n")
	} else {
		b.WriteString("\nthe control plane and the scheduler stay up until Ctrl-C.\n")
	}
	b.WriteString(whoSchedules(s.Profiles, s.DefaultScheduler) + "\n")
	b.WriteString("in another shell:\n")
	export := "export KUBECONFIG=" + shellQuote(s.Kubeconfig)
	if dir := kubectlDir(assets); dir != "" {
		export += " PATH=" + shellQuote(dir) + ":$PATH"
	}
	b.WriteString("  " + export + "\n")
	b.WriteString("  kubectl get pods -A -o wide\n")
	if kubectlDir(assets) == "" {
		fmt.Fprintf(&b, "(no kubectl next to the control plane's binaries in %s: `make kubectl` in the clone builds bin/kubectl, or use yours)\n", assets)
	}
	return b.String()
}

// whoSchedules says which pods the kept cluster's schedulers take, by the
// schedulerName they set; a pod that sets none gets default-scheduler.
func whoSchedules(profiles []string, defaultScheduler bool) string {
	names := orList(profiles)
	switch {
	case defaultScheduler && len(profiles) == 1:
		return "pods naming schedulerName: " + names + " get this config's profile; pods naming none get the default profile (default-scheduler, the in-tree plugins)."
	case defaultScheduler:
		return "pods naming schedulerName: " + names + " get this config's profile of that name; pods naming none get the default profile (default-scheduler, the in-tree plugins)."
	case len(profiles) == 1:
		return "every pod naming no schedulerName (or default-scheduler) gets this config's profile."
	default:
		return "pods naming schedulerName: " + names + " get this config's profile of that name; a pod naming none names default-scheduler."
	}
}

// orList is "a", "a or b", "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// kubectlDir is dir, absolute, when it holds an executable kubectl (`make
// kubectl` builds bin/kubectl next to the control plane's binaries), else
// "".
func kubectlDir(dir string) string {
	if dir == "" {
		return ""
	}
	st, err := os.Stat(filepath.Join(dir, "kubectl"))
	if err != nil || !st.Mode().IsRegular() || st.Mode()&0o111 == 0 {
		return ""
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	return abs
}

// shellQuote is s as one word of a POSIX shell: as is when it holds only
// characters that need no quoting, else single-quoted.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=,:@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
