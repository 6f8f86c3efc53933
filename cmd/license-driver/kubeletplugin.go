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
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/internal/controllerrun"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/node"
)

type kubeletPluginFlags struct {
	configFile, kubeconfig string
	nodeName, podUID       string
	pluginDataDir          string
	registrarDir, cdiDir   string
	healthAddress          string
}

func newKubeletPluginCommand() *cobra.Command {
	f := kubeletPluginFlags{}
	cmd := &cobra.Command{
		Use:   "kubelet-plugin",
		Short: "Prepare allocated seats on this node for the kubelet (run as a DaemonSet)",
		Long: `kubelet-plugin registers the driver with the node's kubelet and prepares each
allocated seat as a CDI device that sets the feature's environment (for example
LM_LICENSE_FILE) in the pod's containers.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runKubeletPlugin(cmd.Context(), f)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.configFile, "config", "", "The LicenseDriverConfiguration file (required); apiVersion, kind and features suffice.")
	controllerrun.AddKubeconfigFlag(fs, &f.kubeconfig)
	fs.StringVar(&f.nodeName, "node-name", os.Getenv("NODE_NAME"), "The node's name (default: the NODE_NAME environment variable), for logs.")
	fs.StringVar(&f.podUID, "pod-uid", os.Getenv("POD_UID"), "This pod's UID (default: POD_UID); set, it lets the kubelet run old and new plugin side by side during a rolling update.")
	fs.StringVar(&f.pluginDataDir, "plugin-data-dir", node.DefaultPluginDataDir, "Directory of the DRA socket the kubelet connects to.")
	fs.StringVar(&f.registrarDir, "registrar-dir", node.DefaultRegistrarDir, "The kubelet's plugin registration directory.")
	fs.StringVar(&f.cdiDir, "cdi-dir", node.DefaultCDIDir, "Directory the container runtime reads CDI specs from.")
	fs.StringVar(&f.healthAddress, "health-address", "", "TCP address of the gRPC health service (grpc.health.v1.Health, services \""+node.HealthLiveness+"\" and \""+node.HealthReadiness+"\") for the kubelet's grpc probes, e.g. :8081; empty: none.")
	_ = cmd.MarkFlagRequired("config")
	return cmd
}

func runKubeletPlugin(ctx context.Context, f kubeletPluginFlags) error {
	cfg, err := loadNodeConfig(f.configFile)
	if err != nil {
		return err
	}
	if src := licenseSource(cfg); src != "" {
		// It runs on every node: a server's address or an http URL with
		// a password has no business there.
		klog.FromContext(ctx).Info("Warning: the configuration holds a license source, which the kubelet plugin does not read; give it a configuration of apiVersion, kind and features only (manifests/license-driver/configmap.yaml, license-driver-kubelet-plugin-config)",
			"config", f.configFile, "source", src)
	}
	if err := f.checkDirs(); err != nil {
		return err
	}
	restConfig, err := controllerrun.ClientConfig(f.kubeconfig, "license-driver-kubelet-plugin")
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return err
	}
	var health net.Listener
	if f.healthAddress != "" {
		// node.Run closes it.
		if health, err = (&net.ListenConfig{}).Listen(ctx, "tcp", f.healthAddress); err != nil {
			return fmt.Errorf("--health-address: %w", err)
		}
	}
	return node.Run(ctx, node.Options{
		NodeName:       f.nodeName,
		KubeClient:     client,
		Config:         cfg,
		PluginDataDir:  f.pluginDataDir,
		RegistrarDir:   f.registrarDir,
		CDIDir:         f.cdiDir,
		PodUID:         types.UID(f.podUID),
		HealthListener: health,
	})
}

// checkDirs checks the directory flags, so that a mistake names the flag
// (node.Run checks them too, by their Options names).
func (f kubeletPluginFlags) checkDirs() error {
	for _, d := range []struct{ flag, path string }{
		{"--plugin-data-dir", f.pluginDataDir}, {"--registrar-dir", f.registrarDir}, {"--cdi-dir", f.cdiDir},
	} {
		if !filepath.IsAbs(d.path) {
			return fmt.Errorf("%s %q: must be an absolute path (the kubelet and the container runtime resolve it on the host)", d.flag, d.path)
		}
	}
	// The kubelet creates its registration directory: the plugin does not.
	if fi, err := os.Stat(f.registrarDir); err != nil {
		return fmt.Errorf("--registrar-dir: %w (the kubelet's plugin registration directory, mounted from the host)", err)
	} else if !fi.IsDir() {
		return fmt.Errorf("--registrar-dir %q: not a directory", f.registrarDir)
	}
	return nil
}

// loadNodeConfig reads the file of --config as the kubelet plugin's
// configuration, which needs no source: see loadConfig.
func loadNodeConfig(path string) (*config.Configuration, error) {
	c, err := config.LoadNode(path)
	if err != nil {
		return nil, fmt.Errorf("the license driver configuration (--config): %w", err)
	}
	return c, nil
}

// licenseSource names the source of c that reads a license server, ""
// for none (no source, or the static one).
func licenseSource(c *config.Configuration) string {
	switch {
	case c.Source.LMStat != nil:
		return "lmstat"
	case c.Source.HTTP != nil:
		return "http"
	}
	return ""
}
