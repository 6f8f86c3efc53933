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
	"context"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
)

// TestLoggingStart: the logging flags apply (here -v and the JSON format,
// which needs its registration), and the command's context carries a
// logger and ends on SIGTERM, as when the kubelet stops the pod. It applies
// the flags to the test process, once: the only test that does.
func TestLoggingStart(t *testing.T) {
	logging := NewLogging()
	var started context.Context
	cmd := &cobra.Command{
		Use:               "controller",
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error { return logging.Start(cmd) },
		RunE: func(cmd *cobra.Command, _ []string) error {
			started = cmd.Context()
			return nil
		},
	}
	logging.AddFlags(cmd.PersistentFlags())
	cmd.SetArgs([]string{"-v=3", "--logging-format=json"})
	_, parent := ktesting.NewTestContext(t)
	if err := cmd.ExecuteContext(parent); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if !klog.FromContext(started).V(3).Enabled() {
		t.Errorf("-v=3 did not apply")
	}
	// The flags' logger, not the caller's.
	if got, want := fmt.Sprintf("%T", klog.FromContext(started).GetSink()), fmt.Sprintf("%T", klog.Background().GetSink()); got != want {
		t.Errorf("the command's logger writes with %s, want the flags' %s", got, want)
	}
	if started.Err() != nil {
		t.Fatalf("the context ended before SIGTERM: %v", started.Err())
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("SIGTERM did not end the command's context")
	}
}
