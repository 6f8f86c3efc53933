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

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/internal/controllerrun"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/controller"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/source"
)

type controllerFlags struct {
	configFile, kubeconfig string
	leaderElection         controllerrun.LeaderElection
	httpAddress            string
}

func newControllerCommand() *cobra.Command {
	f := controllerFlags{}
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Publish the license features' seats and DeviceClasses (run as a Deployment)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runController(cmd.Context(), f)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.configFile, "config", "", "The LicenseDriverConfiguration file (required).")
	controllerrun.AddKubeconfigFlag(fs, &f.kubeconfig)
	f.leaderElection.AddFlags(fs, "license-driver")
	controllerrun.AddHTTPAddressFlag(fs, &f.httpAddress)
	_ = cmd.MarkFlagRequired("config")
	return cmd
}

func runController(ctx context.Context, f controllerFlags) error {
	logger := klog.FromContext(ctx)
	if f.leaderElection.Enabled {
		if err := f.leaderElection.Check(); err != nil {
			return err
		}
	}
	cfg, err := loadConfig(f.configFile)
	if err != nil {
		return err
	}
	src, err := source.New(cfg)
	if err != nil {
		return err
	}
	restConfig, err := controllerrun.ClientConfig(f.kubeconfig, "license-driver-controller")
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return err
	}
	recorder, shutdown := controllerrun.NewEventRecorder(ctx, client, "license-driver-controller")
	defer shutdown()
	controller.RegisterMetrics()
	if f.httpAddress != "" {
		if err := controllerrun.ServeHTTP(ctx, f.httpAddress); err != nil {
			return err
		}
	}
	opts := controller.Options{Client: client, Config: cfg, Source: src, Recorder: recorder}
	run := controllerrun.StopQuietly(func(ctx context.Context) error { return controller.Run(ctx, opts) })
	if !f.leaderElection.Enabled {
		return run(ctx)
	}
	return f.leaderElection.Run(ctx, client, recorder, func(ctx context.Context) error {
		logger.Info("Leading: publishing license seats", "driver", licensedriver.DriverName)
		return run(ctx)
	})
}
