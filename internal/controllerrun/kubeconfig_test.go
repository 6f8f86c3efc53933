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

package controllerrun

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes a kubeconfig of server with a token and returns
// its path.
func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: server}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "t"}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "c"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestClientConfig: a kubeconfig file gives its server with the user
// agent; a missing file says "kubeconfig"; run on a workstation without
// --kubeconfig, the error says to pass it, with the shell's $KUBECONFIG
// when it is one file, instead of client-go's "try setting
// KUBERNETES_MASTER environment variable".
func TestClientConfig(t *testing.T) {
	kubeconfig := writeKubeconfig(t, "https://127.0.0.1:1")
	missing := filepath.Join(t.TempDir(), "no-such-kubeconfig")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	for _, tc := range []struct {
		name, kubeconfig, kubeconfigEnv string
		want, notWant                   []string
	}{
		{name: "a file", kubeconfig: kubeconfig},
		{name: "a missing file", kubeconfig: missing, want: []string{"kubeconfig: ", missing}},
		{name: "no file, KUBECONFIG set", kubeconfigEnv: kubeconfig,
			want: []string{"--kubeconfig is empty and this is not a pod of a cluster (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT unset): pass --kubeconfig <file>",
				`; for this shell's KUBECONFIG (` + kubeconfig + `): --kubeconfig "$KUBECONFIG"`}},
		{name: "no file, no KUBECONFIG", want: []string{"pass --kubeconfig <file>"}, notWant: []string{"this shell's KUBECONFIG"}},
		{name: "no file, KUBECONFIG a list", kubeconfigEnv: kubeconfig + string(filepath.ListSeparator) + kubeconfig,
			want: []string{"pass --kubeconfig <file>"}, notWant: []string{"this shell's KUBECONFIG"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", tc.kubeconfigEnv)
			cfg, err := ClientConfig(tc.kubeconfig, "my-controller")
			if len(tc.want) == 0 {
				if err != nil || cfg.Host != "https://127.0.0.1:1" || cfg.UserAgent != "my-controller" {
					t.Fatalf("ClientConfig: %v; want the file's server and the user agent, got %+v", err, cfg)
				}
				return
			}
			if err == nil {
				t.Fatalf("ClientConfig: no error, want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error lacks %q: %v", w, err)
				}
			}
			for _, w := range append(tc.notWant, "KUBERNETES_MASTER") {
				if strings.Contains(err.Error(), w) {
					t.Errorf("the error holds %q: %v", w, err)
				}
			}
		})
	}
}

// TestAddFlags: --kubeconfig and --http-address as the manifests pass them.
func TestAddFlags(t *testing.T) {
	var kubeconfig, address string
	fs := pflag.NewFlagSet("controller", pflag.ContinueOnError)
	AddKubeconfigFlag(fs, &kubeconfig)
	AddHTTPAddressFlag(fs, &address)
	if address != "127.0.0.1:8080" || kubeconfig != "" {
		t.Errorf("defaults: --kubeconfig %q --http-address %q, want \"\" and 127.0.0.1:8080", kubeconfig, address)
	}
	if err := fs.Parse([]string{"--kubeconfig=k", "--http-address=:9090"}); err != nil {
		t.Fatal(err)
	}
	if address != ":9090" || kubeconfig != "k" {
		t.Errorf("parsed: --kubeconfig %q --http-address %q, want k and :9090", kubeconfig, address)
	}
}
