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

// Package localcluster runs a Kubernetes cluster without machines, in
// temporary directories: etcd and kube-apiserver (through envtest),
// kube-controller-manager with the workload and DRA controllers, and KWOK as every
// node's kubelet (nodes Ready with heartbeats, bound pods Running unless
// created with the playground's bound-pod annotation, deleted pods gone). Config authenticates
// with a static token and speaks protobuf. hack/install-envtest.sh builds the four binaries from go.mod.
// No scheduler runs: the caller starts ours. The playground and the
// integration tests use it.
package localcluster

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Binaries are the programs Start runs, all from the assets directory.
var Binaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kwok"}

// Controllers are the kube-controller-manager controllers Start runs: those
// that make and remove workloads' pods, the pod garbage collector (which
// deletes the pods of a deleted node, as in a real cluster: no kubelet is
// left to), and the garbage collector, namespace and ServiceAccount
// controllers a user's kubectl apply relies on. For DRA (resource.k8s.io/v1,
// served and gated on by default in v1.37, as are DeviceClass
// extendedResourceName and device taints): the resourceclaim-controller,
// which takes a pod that ended out of its claims' reservedFor, deallocates
// them and removes their finalizer (without it a deleted or finished pod's
// claim kept its device, and the pods waiting for one never started), and
// the device-taint-eviction-controller, which evicts pods from devices
// tainted NoExecute, as a real cluster does. Node lifecycle is left out
// (KWOK keeps every node Ready), and so are the token controllers: the
// ServiceAccount admission plugin is off (see Start).
var Controllers = []string{
	"deployment-controller",
	"replicaset-controller",
	"replicationcontroller-controller",
	"statefulset-controller",
	"daemonset-controller",
	"job-controller",
	"cronjob-controller",
	"ttl-after-finished-controller",
	"disruption-controller",
	"pod-garbage-collector-controller",
	"garbage-collector-controller",
	"namespace-controller",
	"serviceaccount-controller",
	"resourceclaim-controller",
	"device-taint-eviction-controller",
}

//go:embed kwok.yaml
var kwokConfig []byte

// CompleteAfterAnnotation on a Job's pod (a Go duration, "30s") makes KWOK
// complete it (Succeeded) that long after it started, instead of at once.
const CompleteAfterAnnotation = "playground.adminsched.io/complete-after"

// ControlPlane is a running cluster; the output of each of its programs is
// in a log file of the log directory given to Start.
type ControlPlane struct {
	// Config reaches the API server as a cluster admin.
	Config *rest.Config
	// KubeConfig is Config as a kubeconfig file's content.
	KubeConfig []byte
	// KubeconfigPath is a file holding KubeConfig, in the log directory.
	KubeconfigPath string

	env   *envtest.Environment
	procs []*process
	logs  []*os.File
}

// Start starts etcd, kube-apiserver, kube-controller-manager and KWOK from
// assets (the directory hack/install-envtest.sh fills). logDir receives
// their logs, the admin kubeconfig and KWOK's config. Start returns once
// the API server serves; the controller-manager and KWOK start in the
// background (Err reports if one of them exits). The error says which
// binary failed, where it was looked for, and how to build it.
func Start(assets, logDir string, opts ...Option) (*ControlPlane, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.err != nil {
		return nil, fmt.Errorf("starting the control plane: %w", o.err)
	}
	if err := CheckAssets(assets); err != nil {
		return nil, err
	}
	if strings.Contains(logDir, ",") {
		// KWOK's --config is a list flag, split at commas.
		return nil, fmt.Errorf("the log directory %q holds a comma, which KWOK cannot take in its --config path: use a directory without one (for the playground, a TMPDIR without one)", logDir)
	}
	cp := &ControlPlane{}
	etcdLog, err := cp.createLog(logDir, "etcd.log")
	if err != nil {
		return nil, err
	}
	apiLog, err := cp.createLog(logDir, "kube-apiserver.log")
	if err != nil {
		cp.closeLogs()
		return nil, err
	}
	cp.env = &envtest.Environment{
		BinaryAssetsDirectory:    assets,
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
	}
	tokenFile, token, err := writeTokenFile(logDir)
	if err != nil {
		cp.closeLogs()
		return nil, err
	}
	etcdPath, err := gcWrapper(logDir, filepath.Join(assets, "etcd"))
	if err != nil {
		cp.closeLogs()
		return nil, err
	}
	apiPath, err := gcWrapper(logDir, filepath.Join(assets, "kube-apiserver"))
	if err != nil {
		cp.closeLogs()
		return nil, err
	}
	cp.env.ControlPlane.Etcd = &envtest.Etcd{Out: etcdLog, Err: etcdLog, Path: etcdPath}
	api := cp.env.ControlPlane.GetAPIServer()
	api.Out, api.Err, api.Path = apiLog, apiLog, apiPath
	api.Configure().Set("token-auth-file", tokenFile)
	// No node lifecycle controller runs, so TaintNodesByCondition would
	// leave every new node tainted not-ready; Priority needs priority
	// classes a fresh cluster may not have yet; ServiceAccount would refuse
	// pods until the ServiceAccount controller has made the namespace's
	// default account, and mount tokens nothing reads. Upstream's
	// integration tests turn them off too.
	api.Configure().Set("disable-admission-plugins", "ServiceAccount,TaintNodesByCondition,Priority")
	// API priority and fairness classifies, queues and estimates the work
	// of every request, for fairness between tenants a one-user cluster
	// does not have: about 4% of the API server's profile while replaying
	// a snapshot, and about 8% of its CPU over whole runs. Without it the
	// server still limits requests in flight (400, 200 mutating).
	api.Configure().Set("enable-priority-and-fairness", "false")
	// Without a grace period the server does not end open watches on
	// SIGTERM and waits for their clients to leave: a kubectl -w or a
	// controller outside (the license driver's) kept a Ctrl-C of
	// `playground --keep` waiting for the stop timeout, a minute.
	api.Configure().Set("shutdown-watch-termination-grace-period", "2s")
	for _, arg := range o.apiServerArgs {
		api.Configure().Append(arg[0], arg[1])
	}

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
	cp.Config = tokenConfig(cfg, token)
	if cp.KubeConfig, err = kubeconfigFor(cp.Config); err != nil {
		_ = cp.Stop()
		return nil, err
	}
	if err := cp.startNodesAndControllers(assets, logDir, o.controllerManagerArgs); err != nil {
		_ = cp.Stop()
		return nil, err
	}
	return cp, nil
}

func (cp *ControlPlane) startNodesAndControllers(assets, logDir string, kcmArgs []string) error {
	cp.KubeconfigPath = filepath.Join(logDir, "kubeconfig")
	if err := os.WriteFile(cp.KubeconfigPath, cp.KubeConfig, 0o600); err != nil {
		return err
	}
	kwokConfigPath := filepath.Join(logDir, "kwok.yaml")
	if err := os.WriteFile(kwokConfigPath, kwokConfig, 0o600); err != nil {
		return err
	}
	kcm, err := cp.start(assets, logDir, "kube-controller-manager", append([]string{
		"--kubeconfig=" + cp.KubeconfigPath,
		"--controllers=" + strings.Join(Controllers, ","),
		"--leader-elect=false",
		// Nothing scrapes it: no serving port, no certificates to make.
		"--secure-port=0",
	}, kcmArgs...)...)
	if err != nil {
		return err
	}
	cp.procs = append(cp.procs, kcm)
	kwok, err := cp.start(assets, logDir, "kwok",
		"--kubeconfig="+cp.KubeconfigPath,
		"--config="+kwokConfigPath,
	)
	if err != nil {
		return err
	}
	cp.procs = append(cp.procs, kwok)
	return nil
}

// CheckAssets checks that assets holds every binary Start runs, executable.
func CheckAssets(assets string) error {
	var missing []string
	for _, bin := range Binaries {
		path := filepath.Join(assets, bin)
		if st, err := os.Stat(path); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			missing = append(missing, path)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("not found (or not executable): %s: build them with `make envtest`, or point --assets (KUBEBUILDER_ASSETS) at a directory holding %s",
			strings.Join(missing, ", "), strings.Join(Binaries, ", "))
	}
	return nil
}

// Err is nil while kube-controller-manager and KWOK run, and otherwise says
// which one exited, with the end of its log: without them no workload gets
// pods and no pod starts, so a caller waiting on the cluster checks it.
func (cp *ControlPlane) Err() error {
	var errs []error
	for _, p := range cp.procs {
		if err := p.exitErr(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Stop stops KWOK, kube-controller-manager, kube-apiserver and etcd; their
// temp dirs are removed. The log directory stays.
func (cp *ControlPlane) Stop() error {
	defer cp.closeLogs()
	var errs []error
	for i := len(cp.procs) - 1; i >= 0; i-- {
		if err := cp.procs[i].stop(10 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	cp.procs = nil
	if cp.env != nil {
		errs = append(errs, cp.env.Stop())
	}
	return errors.Join(errs...)
}

func (cp *ControlPlane) createLog(dir, name string) (*os.File, error) {
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	cp.logs = append(cp.logs, f)
	return f, nil
}

func (cp *ControlPlane) closeLogs() {
	for _, f := range cp.logs {
		_ = f.Close()
	}
	cp.logs = nil
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

// AssetsFromEnv is where tests find Start's binaries: $KUBEBUILDER_ASSETS,
// else repoBin (the repository's bin/, relative to the test's package),
// checked with CheckAssets.
func AssetsFromEnv(repoBin string) (string, error) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		var err error
		if assets, err = filepath.Abs(repoBin); err != nil {
			return "", err
		}
	}
	return assets, CheckAssets(assets)
}
