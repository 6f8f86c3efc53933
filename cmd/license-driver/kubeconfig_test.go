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
	"strings"
	"testing"
)

// TestNoKubeconfigOutsideCluster: run on a workstation without
// --kubeconfig, both roles say to pass it, with the shell's $KUBECONFIG
// (controllerrun.ClientConfig; its test has the other cases), instead of
// client-go's "try setting KUBERNETES_MASTER environment variable". The log
// quotes the error, its double quotes escaped.
func TestNoKubeconfigOutsideCluster(t *testing.T) {
	config := writeFile(t, "static.yaml", strings.ReplaceAll(staticConfig, "%SEATS%", "3"))
	features := writeFile(t, "features.yaml", featuresOnlyConfig)
	dir := t.TempDir()
	shellKubeconfig := filepath.Join(dir, "kubeconfig")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	for _, tc := range []struct {
		name, kubeconfigEnv string
		args                []string
		want                []string
	}{
		{
			name: "controller, KUBECONFIG set",
			args: []string{"controller", "--config=" + config, "--http-address="}, kubeconfigEnv: shellKubeconfig,
			want: []string{"--kubeconfig is empty and this is not a pod of a cluster", "pass --kubeconfig <file>",
				`for this shell's KUBECONFIG (` + shellKubeconfig + `): --kubeconfig \"$KUBECONFIG\"`},
		},
		{
			name: "kubelet-plugin, KUBECONFIG set",
			args: []string{"kubelet-plugin", "--config=" + features, "--plugin-data-dir=" + filepath.Join(dir, "plugin"),
				"--registrar-dir=" + dir, "--cdi-dir=" + filepath.Join(dir, "cdi")},
			kubeconfigEnv: shellKubeconfig,
			want:          []string{"pass --kubeconfig <file>", `--kubeconfig \"$KUBECONFIG\"`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", tc.kubeconfigEnv)
			code, _, stderr := runCommand(t, tc.args...)
			if code != 1 {
				t.Errorf("exit code %d, want 1; stderr:\n%s", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, "KUBERNETES_MASTER") {
				t.Errorf("stderr holds client-go's KUBERNETES_MASTER:\n%s", stderr)
			}
		})
	}
}
