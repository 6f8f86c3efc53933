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
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// AddKubeconfigFlag registers --kubeconfig on fs, for ClientConfig.
func AddKubeconfigFlag(fs *pflag.FlagSet, kubeconfig *string) {
	fs.StringVar(kubeconfig, "kubeconfig", "", "Kubeconfig file; empty: the in-cluster configuration.")
}

// ClientConfig is the client configuration of the file kubeconfig, or the
// pod's in-cluster one when it is empty, with userAgent. Outside a cluster,
// client-go's own message ("try setting KUBERNETES_MASTER") sends a user on
// a workstation the wrong way: this one names the flag, and this shell's
// $KUBECONFIG, which the binary does not read by itself (as kube-scheduler).
func ClientConfig(kubeconfig, userAgent string) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	} else {
		cfg, err = rest.InClusterConfig()
		if errors.Is(err, rest.ErrNotInCluster) {
			return nil, errNotInCluster()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	cfg.UserAgent = userAgent
	return cfg, nil
}

func errNotInCluster() error {
	msg := "--kubeconfig is empty and this is not a pod of a cluster (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT unset): pass --kubeconfig <file>"
	if env := os.Getenv("KUBECONFIG"); env != "" && !strings.ContainsRune(env, filepath.ListSeparator) {
		msg += fmt.Sprintf(`; for this shell's KUBECONFIG (%s): --kubeconfig "$KUBECONFIG"`, env)
	}
	return errors.New(msg)
}
