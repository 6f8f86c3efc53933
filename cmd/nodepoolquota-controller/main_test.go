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
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/adminsched/scheduler-plugins/internal/controllerrun"
)

// TestHelp: the root lists run, and run's help names every flag the
// install sets.
func TestHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(nil, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "Available Commands:") || !strings.Contains(stdout.String(), "run ") {
		t.Errorf("no subcommand: exit code %d, stdout %q", code, stdout.String())
	}
	stdout.Reset()
	if code := run([]string{"run", "--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("run --help: exit code %d: %s", code, stderr.String())
	}
	for _, flag := range []string{"--kubeconfig", "--leader-elect", "--leader-elect-resource-name string",
		`(default "nodepoolquota-controller")`, "--leader-elect-resource-namespace", "--http-address", "--secure-port", "-v, --v",
		"scheduling.adminsched.io/nodepool-quota"} {
		if !strings.Contains(stdout.String(), flag) {
			t.Errorf("run --help does not name %s", flag)
		}
	}
	stderr.Reset()
	if code := run([]string{"run", "extra"}, &stdout, &stderr); code != 1 || !strings.HasPrefix(stderr.String(), "nodepoolquota-controller: ") {
		t.Errorf("an argument: exit code %d, stderr %q", code, stderr.String())
	}
}

// TestRunBadInput: every refusal names the flag. A process applies its
// logging flags once, so the cases call runController, which the command
// runs after them.
func TestRunBadInput(t *testing.T) {
	flags := func(edit func(*runFlags)) runFlags {
		f := runFlags{leaderElection: leaderElectionDefaults(t)}
		edit(&f)
		return f
	}
	for _, tt := range []struct {
		name, want string
		flags      runFlags
	}{
		{"lease shorter than the renew deadline", "--leader-elect-lease-duration (5s) must be longer than --leader-elect-renew-deadline (10s)",
			flags(func(f *runFlags) { f.leaderElection.LeaseDuration = 5 * time.Second })},
		{"no cluster", "--kubeconfig is empty and this is not a pod of a cluster", flags(func(*runFlags) { t.Setenv("KUBERNETES_SERVICE_HOST", "") })},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := runController(context.Background(), tt.flags)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one that contains %q", err, tt.want)
			}
		})
	}
}

// TestServed: without the CRD the controller refuses to start, naming the
// manifest to install; with it, it starts, also when discovery lists the
// CRD only a moment after the controller asks (applied together).
func TestServed(t *testing.T) {
	saved := servedTimeout
	servedTimeout = 600 * time.Millisecond
	t.Cleanup(func() { servedTimeout = saved })
	ctx := context.Background()
	d := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}
	if err := served(ctx, d); err == nil || !strings.Contains(err.Error(), "install the CRD "+crd) {
		t.Errorf("no CRD: %v, want an error that says to install %s", err, crd)
	}
	d.Resources = []*metav1.APIResourceList{{GroupVersion: "scheduling.adminsched.io/v1alpha1", APIResources: []metav1.APIResource{{Name: "nodepoolquotas"}}}}
	if err := served(ctx, d); err != nil {
		t.Errorf("with the CRD: %v", err)
	}
	calls := 0
	d.PrependReactor("get", "resource", func(clienttesting.Action) (bool, runtime.Object, error) {
		calls++
		if calls < 3 {
			return true, nil, apierrors.NewNotFound(schema.GroupResource{}, "scheduling.adminsched.io/v1alpha1")
		}
		return false, nil, nil
	})
	if err := served(ctx, d); err != nil || calls != 3 {
		t.Errorf("with the CRD listed from discovery's third answer: %v after %d calls, want it served after 3", err, calls)
	}
}

// leaderElectionDefaults is the leader election as parsed with no flag set.
func leaderElectionDefaults(t *testing.T) controllerrun.LeaderElection {
	t.Helper()
	var l controllerrun.LeaderElection
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	l.AddFlags(fs, name)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if l.Name != "nodepoolquota-controller" {
		t.Errorf("Lease %q, want nodepoolquota-controller", l.Name)
	}
	return l
}
