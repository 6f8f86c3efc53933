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

// Package localcluster runs a Kubernetes control plane (etcd and
// kube-apiserver, built from go.mod by hack/install-envtest.sh) in temporary
// directories, set up for scheduling without a controller-manager or kubelets.
// The playground and the integration tests use it.
package localcluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// ControlPlane is an etcd and a kube-apiserver run from an assets directory,
// their output in log files.
type ControlPlane struct {
	// Config reaches the API server as a cluster admin.
	Config *rest.Config
	// KubeConfig is Config as a kubeconfig file's content.
	KubeConfig []byte

	env  *envtest.Environment
	logs []*os.File
}

// Start starts etcd and kube-apiserver from assets (the directory
// hack/install-envtest.sh fills). logDir receives their logs. The error says
// which binary failed, where it was looked for, and how to build it.
func Start(assets, logDir string) (*ControlPlane, error) {
	if err := CheckAssets(assets); err != nil {
		return nil, err
	}
	cp := &ControlPlane{}
	etcdLog, err := os.Create(filepath.Join(logDir, "etcd.log"))
	if err != nil {
		return nil, err
	}
	apiLog, err := os.Create(filepath.Join(logDir, "kube-apiserver.log"))
	if err != nil {
		etcdLog.Close()
		return nil, err
	}
	cp.logs = []*os.File{etcdLog, apiLog}
	cp.env = &envtest.Environment{
		BinaryAssetsDirectory:    assets,
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
	}
	cp.env.ControlPlane.Etcd = &envtest.Etcd{Out: etcdLog, Err: etcdLog}
	api := cp.env.ControlPlane.GetAPIServer()
	api.Out, api.Err = apiLog, apiLog
	// Without a node lifecycle controller, TaintNodesByCondition would leave
	// every new node tainted not-ready, and Priority needs priority classes
	// that only a controller creates: upstream's integration tests turn both
	// off, and ServiceAccount, which needs the token controller.
	api.Configure().Set("disable-admission-plugins", "ServiceAccount,TaintNodesByCondition,Priority")

	cfg, err := cp.env.Start()
	if err != nil {
		cp.closeLogs()
		msg := err.Error()
		bin, log := "kube-apiserver", apiLog.Name()
		if !strings.Contains(msg, "kube-apiserver") && strings.Contains(msg, "etcd") {
			bin, log = "etcd", etcdLog.Name()
		}
		return nil, fmt.Errorf("starting the control plane: %s (%s) failed: %w\n%s output: %s\nrebuild the binaries with `make envtest`",
			bin, filepath.Join(assets, bin), err, bin, tail(log))
	}
	cp.Config, cp.KubeConfig = cfg, cp.env.KubeConfig
	return cp, nil
}

// CheckAssets checks that assets holds executable etcd and kube-apiserver.
func CheckAssets(assets string) error {
	for _, bin := range []string{"etcd", "kube-apiserver"} {
		path := filepath.Join(assets, bin)
		if st, err := os.Stat(path); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return fmt.Errorf("%s not found (or not executable) at %s: build it with `make envtest`, or point --assets (KUBEBUILDER_ASSETS) at a directory holding etcd and kube-apiserver", bin, path)
		}
	}
	return nil
}

// Stop stops kube-apiserver and etcd; their temp dirs are removed.
func (cp *ControlPlane) Stop() error {
	defer cp.closeLogs()
	return cp.env.Stop()
}

func (cp *ControlPlane) closeLogs() {
	for _, f := range cp.logs {
		_ = f.Close()
	}
}

// tail returns the last lines of a log file, for error messages.
func tail(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	if len(lines) == 1 && lines[0] == "" {
		return "(empty)"
	}
	return "\n  " + strings.Join(lines, "\n  ")
}
