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

package playground

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/adminsched/scheduler-plugins/internal/localscheduler"
	"github.com/adminsched/scheduler-plugins/internal/playground/schedconfig"
)

// defaultSchedulerConfig is the file name, in a run's directory, of the
// config of the default scheduler that a kept cluster runs.
const defaultSchedulerConfig = "default-scheduler-config.yaml"

// inTreeConfig is a KubeSchedulerConfiguration with every default: one
// profile, default-scheduler, with the in-tree plugins.
const inTreeConfig = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

// keepUp is what Play leaves up of the last run, sc's, whose stop stops
// it: with the default scheduler added when sc has no profile of that
// name and the run was complete (a run that timed out is not kept). It
// returns the session's stop and whether the default scheduler runs.
func keepUp(ctx context.Context, sc *schedconfig.Config, stop func(), complete bool, progress io.Writer) (func(), bool, error) {
	if !complete || !needsDefaultScheduler(sc) {
		return stop, false, nil
	}
	fmt.Fprintf(progress, "starting the default scheduler (profile %s, the in-tree plugins) for the pods that name no scheduler\n", corev1.DefaultSchedulerName)
	ds, err := startDefaultScheduler(ctx, sc)
	if err != nil {
		stop()
		return nil, false, err
	}
	return func() {
		ds.Stop()
		stop()
	}, true, nil
}

// needsDefaultScheduler reports whether a kept cluster of sc must run the
// default scheduler: a pod that names no scheduler gets schedulerName
// default-scheduler from the API server, and on a real cluster the
// default scheduler takes it; the config may serve that name itself.
func needsDefaultScheduler(sc *schedconfig.Config) bool {
	return !slices.Contains(sc.Profiles, corev1.DefaultSchedulerName)
}

// startDefaultScheduler starts, next to the run's scheduler, kube-scheduler
// with no config of its own (the in-tree default profile, named
// default-scheduler), on the control plane of sc's kubeconfig, as a real
// cluster runs it beside ours. It starts once the run's results are
// collected, so that nothing in them counts it.
func startDefaultScheduler(ctx context.Context, sc *schedconfig.Config) (*localscheduler.Scheduler, error) {
	// As the run's own copy: this control plane, no leader election.
	data, err := schedconfig.Rewrite([]byte(inTreeConfig), sc.Kubeconfig)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(filepath.Dir(sc.Path), defaultSchedulerConfig)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return nil, err
	}
	s, err := localscheduler.Setup(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("the default scheduler: %w", err)
	}
	if err := s.Start(); err != nil {
		s.Stop()
		return nil, fmt.Errorf("the default scheduler: %w", err)
	}
	return s, nil
}
