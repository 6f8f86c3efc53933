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
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// controlPlane is an etcd and a kube-apiserver run from the assets
// directory, their output in log files of a temp dir.
type controlPlane struct {
	env    *envtest.Environment
	config *rest.Config
	logs   []*os.File
}

// startControlPlane starts etcd and kube-apiserver from assets. dir receives
// their logs. The error says which binary failed, where it was looked for,
// and how to build it.
func startControlPlane(assets, dir string) (*controlPlane, error) {
	if err := checkAssets(assets); err != nil {
		return nil, err
	}
	cp := &controlPlane{}
	etcdLog, err := os.Create(filepath.Join(dir, "etcd.log"))
	if err != nil {
		return nil, err
	}
	apiLog, err := os.Create(filepath.Join(dir, "kube-apiserver.log"))
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
	// No node lifecycle controller and no priority classes here: like the
	// integration tests, turn off the admission plugins that need them.
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
	cp.config = cfg
	return cp, nil
}

// checkAssets checks that assets holds etcd and kube-apiserver.
func checkAssets(assets string) error {
	for _, bin := range []string{"etcd", "kube-apiserver"} {
		path := filepath.Join(assets, bin)
		if st, err := os.Stat(path); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return fmt.Errorf("%s not found (or not executable) at %s: build it with `make envtest`, or point --assets (KUBEBUILDER_ASSETS) at a directory holding etcd and kube-apiserver", bin, path)
		}
	}
	return nil
}

// stop stops kube-apiserver and etcd; envtest removes their temp dirs.
func (cp *controlPlane) stop() error {
	defer cp.closeLogs()
	return cp.env.Stop()
}

func (cp *controlPlane) closeLogs() {
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
