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

// Package node is the license driver's kubelet plugin, run by a DaemonSet on
// every node. It registers the driver with the kubelet and prepares each
// allocated claim as a CDI device that sets the features' environment (for
// example LM_LICENSE_FILE=27000@licsrv) in the pod's containers, so that
// images need no license configuration of their own. It publishes nothing:
// the seats are allNodes devices of the controller's pools.
package node

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
)

// Defaults of Options' directories: where the kubelet and the container
// runtimes look. Each must be the same path inside the plugin's container as
// on the host, because the plugin tells the kubelet its socket's path and the
// runtime reads the CDI specs.
var (
	DefaultPluginDataDir = filepath.Join(kubeletplugin.KubeletPluginsDir, licensedriver.DriverName)
	DefaultRegistrarDir  = kubeletplugin.KubeletRegistryDir
	DefaultCDIDir        = defaultCDIDir
)

// Options configure Run.
type Options struct {
	// NodeName is the node this plugin runs on, for logs. Optional.
	NodeName string
	// KubeClient reads the ResourceClaims the kubelet asks to prepare.
	// Required.
	KubeClient kubernetes.Interface
	// Config is the driver's configuration, decoded by config.LoadNode or
	// config.Load (so defaulted and valid; config.ValidateNode checks it: a
	// source is not needed): it maps each pool to its feature's environment.
	// Required.
	Config *config.Configuration
	// PluginDataDir holds the DRA socket (dra.sock) the kubelet connects
	// to. Created if missing. Default DefaultPluginDataDir.
	PluginDataDir string
	// RegistrarDir is the kubelet's plugin registration directory, where
	// the registration socket goes. Must exist. Default DefaultRegistrarDir.
	RegistrarDir string
	// CDIDir receives one CDI spec file per prepared claim. Created if
	// missing. Default DefaultCDIDir.
	CDIDir string
	// PodUID, when set, turns on the kubelet's rolling updates of the
	// plugin (Kubernetes 1.33 and later): the old and the new pod serve side
	// by side. Pass the pod's UID from the downward API. Optional.
	PodUID types.UID
	// HealthListener, when set, serves the gRPC health service
	// (grpc.health.v1.Health, services HealthLiveness and HealthReadiness)
	// for the kubelet's grpc probes. Run closes it. Optional.
	HealthListener net.Listener

	// listen replaces the DRA socket's listener, for tests.
	listen func(ctx context.Context, path string) (net.Listener, error)
	// healthPeriod replaces defaultHealthPeriod, for tests.
	healthPeriod time.Duration
}

// complete fills in the defaults and checks o; it returns a copy.
func (o Options) complete() (Options, error) {
	if o.KubeClient == nil {
		return o, errors.New("node: Options.KubeClient is required")
	}
	if o.Config == nil {
		return o, errors.New("node: Options.Config is required")
	}
	if errs := config.ValidateNode(o.Config); len(errs) > 0 {
		return o, fmt.Errorf("node: Options.Config: %w", errs.ToAggregate())
	}
	if o.PluginDataDir == "" {
		o.PluginDataDir = DefaultPluginDataDir
	}
	if o.RegistrarDir == "" {
		o.RegistrarDir = DefaultRegistrarDir
	}
	if o.CDIDir == "" {
		o.CDIDir = DefaultCDIDir
	}
	for _, d := range []struct{ name, path string }{
		{"PluginDataDir", o.PluginDataDir}, {"RegistrarDir", o.RegistrarDir}, {"CDIDir", o.CDIDir},
	} {
		if !filepath.IsAbs(d.path) {
			return o, fmt.Errorf("node: Options.%s %q: must be an absolute path (the kubelet and the runtime resolve it on the host)", d.name, d.path)
		}
	}
	return o, nil
}

// Run registers the kubelet plugin and serves the kubelet's prepare and
// unprepare calls until ctx is done; then it stops the gRPC servers, removes
// its sockets and returns nil. It returns an error when it cannot start or
// when a gRPC server fails.
func Run(ctx context.Context, o Options) error {
	if o.HealthListener != nil {
		defer func() { _ = o.HealthListener.Close() }()
	}
	o, err := o.complete()
	if err != nil {
		return err
	}
	logger := klog.FromContext(ctx)
	if o.NodeName != "" {
		logger = klog.LoggerWithValues(logger, "node", klog.KRef("", o.NodeName))
		ctx = klog.NewContext(ctx, logger)
	}

	// The helper needs its data directory; the kubelet owns the registrar
	// directory, and a missing one means a missing hostPath mount.
	if err := os.MkdirAll(o.PluginDataDir, 0o750); err != nil {
		return fmt.Errorf("node: Options.PluginDataDir: %w", err)
	}
	if err := os.MkdirAll(o.CDIDir, 0o755); err != nil {
		return fmt.Errorf("node: Options.CDIDir: %w", err)
	}
	if fi, err := os.Stat(o.RegistrarDir); err != nil {
		return fmt.Errorf("node: Options.RegistrarDir: %w (the kubelet's plugin registration directory, mounted from the host)", err)
	} else if !fi.IsDir() {
		return fmt.Errorf("node: Options.RegistrarDir %q: not a directory", o.RegistrarDir)
	}

	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	d := newDriver(o.Config, o.CDIDir, cancel)

	opts := []kubeletplugin.Option{
		kubeletplugin.DriverName(licensedriver.DriverName),
		kubeletplugin.KubeClient(o.KubeClient),
		kubeletplugin.PluginDataDirectoryPath(o.PluginDataDir),
		kubeletplugin.RegistrarDirectoryPath(o.RegistrarDir),
	}
	// Seats have no health the node could see.
	opts = append(opts, noHealthService(logger)...)
	if o.NodeName != "" {
		opts = append(opts, kubeletplugin.NodeName(o.NodeName))
	}
	if o.listen != nil {
		opts = append(opts, kubeletplugin.PluginListener(o.listen))
	}
	registrarSocket := licensedriver.DriverName + "-reg.sock"
	if o.PodUID != "" {
		opts = append(opts, kubeletplugin.RollingUpdate(o.PodUID))
		registrarSocket = rollingUpdateRegistrarSocket(o.RegistrarDir, o.PodUID)
	}
	var checker *healthChecker
	if o.HealthListener != nil {
		checker = newHealthChecker(logger, filepath.Join(o.RegistrarDir, registrarSocket), licensedriver.DriverName)
		opts = append(opts, kubeletplugin.GRPCInterceptor(checker.intercept))
	}
	helper, err := kubeletplugin.Start(runCtx, d, opts...)
	if err != nil {
		return fmt.Errorf("node: start the kubelet plugin: %w", err)
	}
	logger.Info("Kubelet plugin started", "driver", licensedriver.DriverName,
		"pluginDataDir", o.PluginDataDir, "registrarDir", o.RegistrarDir, "cdiDir", o.CDIDir, "features", len(o.Config.Features))
	stopHealth := func() {}
	if checker != nil {
		period := o.healthPeriod
		if period <= 0 {
			period = defaultHealthPeriod
		}
		stopHealth = serveHealth(runCtx, checker, o.HealthListener, period, func(err error) { cancel(err) })
	}

	<-runCtx.Done()
	stopHealth()
	helper.Stop()
	if ctx.Err() == nil {
		// Not our caller's cancellation: a gRPC server failed.
		return fmt.Errorf("node: kubelet plugin stopped: %w", context.Cause(runCtx))
	}
	logger.Info("Kubelet plugin stopped")
	return nil
}
