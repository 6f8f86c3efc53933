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

package node

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/testing/protocmp"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	drapb "k8s.io/kubelet/pkg/apis/dra/v1"
	drapbv1beta1 "k8s.io/kubelet/pkg/apis/dra/v1beta1"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
)

// waitForFile waits until path exists: Run creates its sockets before it
// blocks, but it runs in another goroutine.
func waitForFile(t *testing.T, path string, runErr <-chan error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case err := <-runErr:
			t.Fatalf("Run returned before %s appeared: %v", path, err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear within 30s", path)
		}
	}
}

func dial(t *testing.T, socket string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("dial %s: %v", socket, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

func protoClaim(uid types.UID) *drapb.Claim {
	return &drapb.Claim{Namespace: "ns", Name: "claim-" + string(uid), Uid: string(uid)}
}

// TestRunThroughGRPC drives Run as the kubelet does: the registration
// socket first, then NodePrepareResources and NodeUnprepareResources on
// the DRA socket it names, with the claims read from the API (a fake
// clientset here).
func TestRunThroughGRPC(t *testing.T) {
	const (
		good    = types.UID("1d1d1d1d-0000-4000-8000-00000000001d")
		unknown = types.UID("2e2e2e2e-0000-4000-8000-00000000002e")
	)
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	root := t.TempDir()
	client := fake.NewClientset(
		allocatedClaim(good, result("container-0-request-0", licensedriver.DriverName, "matlab", "seat-7")),
		allocatedClaim(unknown, result("container-0-request-0", licensedriver.DriverName, "abaqus", "seat-0")),
	)
	o := Options{
		NodeName:      "node-1",
		KubeClient:    client,
		Config:        testConfig(t),
		PluginDataDir: filepath.Join(root, "plugins", licensedriver.DriverName),
		RegistrarDir:  filepath.Join(root, "plugins_registry"),
		CDIDir:        filepath.Join(root, "cdi"),
	}
	if err := os.Mkdir(o.RegistrarDir, 0o750); err != nil {
		t.Fatal(err)
	}
	runErr := make(chan error, 1)
	go func() { runErr <- Run(ctx, o) }()

	regSocket := filepath.Join(o.RegistrarDir, licensedriver.DriverName+"-reg.sock")
	draSocket := filepath.Join(o.PluginDataDir, "dra.sock")
	waitForFile(t, regSocket, runErr)
	waitForFile(t, draSocket, runErr)

	info, err := registerapi.NewRegistrationClient(dial(t, regSocket)).GetInfo(ctx, &registerapi.InfoRequest{})
	if err != nil {
		t.Fatalf("GetInfo: %v", err)
	}
	wantInfo := &registerapi.PluginInfo{
		Type:              registerapi.DRAPlugin,
		Name:              licensedriver.DriverName,
		Endpoint:          draSocket,
		SupportedVersions: []string{drapb.DRAPluginService, drapbv1beta1.DRAPluginService},
	}
	if diff := cmp.Diff(wantInfo, info, protocmp.Transform()); diff != "" {
		t.Errorf("GetInfo (-want +got):\n%s", diff)
	}

	dra := drapb.NewDRAPluginClient(dial(t, draSocket))
	specFile := filepath.Join(o.CDIDir, SpecFileName(good))
	wantPrepare := &drapb.NodePrepareResourcesResponse{Claims: map[string]*drapb.NodePrepareResourceResponse{
		string(good): {Devices: []*drapb.Device{{
			RequestNames: []string{"container-0-request-0"},
			PoolName:     "matlab",
			DeviceName:   "seat-7",
			CdiDeviceIds: []string{licensedriver.DriverName + "/seat=" + string(good)},
		}}},
	}}
	for round := 1; round <= 2; round++ {
		resp, err := dra.NodePrepareResources(ctx, &drapb.NodePrepareResourcesRequest{Claims: []*drapb.Claim{protoClaim(good), protoClaim(unknown)}})
		if err != nil {
			t.Fatalf("NodePrepareResources #%d: %v", round, err)
		}
		// The unknown pool's error is checked for what it must name, then
		// left out of the comparison.
		if msg := resp.Claims[string(unknown)].GetError(); !strings.Contains(msg, `pool "abaqus"`) || !strings.Contains(msg, "known pools: ansys-cfd, matlab") {
			t.Errorf("NodePrepareResources #%d: error for the unknown pool's claim = %q, want it to name the pool and the known ones", round, msg)
		}
		delete(resp.Claims, string(unknown))
		if diff := cmp.Diff(wantPrepare, resp, protocmp.Transform()); diff != "" {
			t.Errorf("NodePrepareResources #%d (-want +got):\n%s", round, diff)
		}
		if diff := cmp.Diff(map[string][]string{SpecFileName(good): {matlabEnv}}, specEnv(t, o.CDIDir)); diff != "" {
			t.Errorf("CDI specs after prepare #%d (-want +got):\n%s", round, diff)
		}
	}

	// The second unprepare, and one of a claim never prepared, succeed too.
	wantUnprepare := &drapb.NodeUnprepareResourcesResponse{Claims: map[string]*drapb.NodeUnprepareResourceResponse{
		string(good): {}, string(unknown): {},
	}}
	for round := 1; round <= 2; round++ {
		resp, err := dra.NodeUnprepareResources(ctx, &drapb.NodeUnprepareResourcesRequest{Claims: []*drapb.Claim{protoClaim(good), protoClaim(unknown)}})
		if err != nil {
			t.Fatalf("NodeUnprepareResources #%d: %v", round, err)
		}
		if diff := cmp.Diff(wantUnprepare, resp, protocmp.Transform()); diff != "" {
			t.Errorf("NodeUnprepareResources #%d (-want +got):\n%s", round, diff)
		}
		if _, err := os.Stat(specFile); !os.IsNotExist(err) {
			t.Errorf("after unprepare #%d: %s still there (stat: %v)", round, specFile, err)
		}
	}

	// A claim the API server does not have fails the whole call, as the
	// kubelet expects (it retries).
	if _, err := dra.NodePrepareResources(ctx, &drapb.NodePrepareResourcesRequest{Claims: []*drapb.Claim{protoClaim("3f3f3f3f")}}); err == nil {
		t.Errorf("NodePrepareResources of a claim that does not exist succeeded")
	}

	cancel()
	select {
	case err := <-runErr:
		if err != nil {
			t.Errorf("Run after cancel: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return within 30s of cancel")
	}
	for _, s := range []string{regSocket, draSocket} {
		if _, err := os.Stat(s); !os.IsNotExist(err) {
			t.Errorf("after Run returned: socket %s still there (stat: %v)", s, err)
		}
	}

	// What the node role's RBAC must grant: nothing but reading claims
	// (RBAC has no versions; the claim that is not found is also looked
	// for in v1beta1 and v1beta2 by the helper's client).
	calls := map[string]int{}
	for _, a := range client.Actions() {
		calls[a.GetVerb()+" "+a.GetResource().GroupResource().String()]++
	}
	if diff := cmp.Diff(map[string]int{"get resourceclaims.resource.k8s.io": 7}, calls); diff != "" {
		t.Errorf("API calls (-want +got):\n%s", diff)
	}
}

func TestRunOptions(t *testing.T) {
	root := t.TempDir()
	registry := filepath.Join(root, "registry")
	if err := os.Mkdir(registry, 0o750); err != nil {
		t.Fatal(err)
	}
	valid := func() Options {
		return Options{
			KubeClient:    fake.NewClientset(),
			Config:        testConfig(t),
			PluginDataDir: filepath.Join(root, "plugin"),
			RegistrarDir:  registry,
			CDIDir:        filepath.Join(root, "cdi"),
		}
	}
	for _, tc := range []struct {
		name    string
		modify  func(*Options)
		wantErr string
	}{
		{name: "no client", modify: func(o *Options) { o.KubeClient = nil }, wantErr: "node: Options.KubeClient is required"},
		{name: "no config", modify: func(o *Options) { o.Config = nil }, wantErr: "node: Options.Config is required"},
		{name: "invalid config", modify: func(o *Options) { o.Config = &config.Configuration{} }, wantErr: "node: Options.Config: "},
		{name: "relative CDI dir", modify: func(o *Options) { o.CDIDir = "cdi" }, wantErr: `node: Options.CDIDir "cdi": must be an absolute path`},
		{name: "no registrar dir", modify: func(o *Options) { o.RegistrarDir = filepath.Join(root, "missing") }, wantErr: "node: Options.RegistrarDir: stat "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			o := valid()
			tc.modify(&o)
			err := Run(ctx, o)
			if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
				t.Errorf("Run: %v, want an error starting with %q", err, tc.wantErr)
			}
		})
	}
}

// TestRunOptionsConfigWithoutSource: the kubelet plugin's own configuration
// holds only the features (config.DecodeNode), no source and no seats; Run
// takes it.
func TestRunOptionsConfigWithoutSource(t *testing.T) {
	c, err := config.DecodeNode([]byte(`
apiVersion: licenses.adminsched.io/v1alpha1
kind: LicenseDriverConfiguration
features:
- name: MATLAB
  env: {LM_LICENSE_FILE: "27000@licsrv.example.com"}
`))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	o := Options{KubeClient: fake.NewClientset(), Config: c, RegistrarDir: root, PluginDataDir: filepath.Join(root, "plugin"), CDIDir: filepath.Join(root, "cdi")}
	if _, err := o.complete(); err != nil {
		t.Errorf("Options with a configuration without a source: %v", err)
	}
	// Still checked: a configuration without features is refused.
	o.Config = &config.Configuration{TypeMeta: c.TypeMeta}
	if _, err := o.complete(); err == nil || !strings.Contains(err.Error(), "features: Required value") {
		t.Errorf("Options with a configuration without features: %v, want features: Required value", err)
	}
}

// failingListener fails its first Accept, as a closed or broken socket does.
type failingListener struct{ net.Listener }

func (failingListener) Accept() (net.Conn, error) { return nil, errors.New("accept: socket broken") }

// TestRunStopsWhenAServerFails: a gRPC server that stops serving ends Run
// with its error, so that the DaemonSet restarts the plugin, instead of a
// plugin that is registered but no longer answers.
func TestRunStopsWhenAServerFails(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	root := t.TempDir()
	o := Options{
		KubeClient:    fake.NewClientset(),
		Config:        testConfig(t),
		PluginDataDir: filepath.Join(root, "plugin"),
		RegistrarDir:  root,
		CDIDir:        filepath.Join(root, "cdi"),
		listen: func(ctx context.Context, path string) (net.Listener, error) {
			l, err := (&net.ListenConfig{}).Listen(ctx, "unix", path)
			return failingListener{l}, err
		},
	}
	runErr := make(chan error, 1)
	go func() { runErr <- Run(ctx, o) }()
	select {
	case err := <-runErr:
		want := "node: kubelet plugin stopped: DRA gRPC server failed: accept: socket broken"
		if err == nil || err.Error() != want {
			t.Errorf("Run: %v, want %q", err, want)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run went on serving for 30s with a broken DRA socket")
	}
}
