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

package maintenancewindow

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2/ktesting"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/window"
)

// TestWatchNodeClaims checks when the plugin reads Karpenter's NodeClaims:
// only with the karpenter arg on and the API served. A node Karpenter made
// counts as carrying a signal only then, so the skip of PreFilter and
// PreScore shows it.
func TestWatchNodeClaims(t *testing.T) {
	karpenterNode := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "k", Labels: map[string]string{"karpenter.sh/nodepool": "default"}}}
	tests := []struct {
		name    string
		enabled bool
		served  bool
		want    bool
	}{
		{name: "served and on", enabled: true, served: true, want: true},
		{name: "not served", enabled: true, served: false, want: false},
		{name: "switched off", enabled: false, served: true, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			client := fake.NewClientset()
			if tc.served {
				client.Discovery().(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{{
					GroupVersion: "karpenter.sh/v1",
					APIResources: []metav1.APIResource{{Name: "nodeclaims", Kind: "NodeClaim"}},
				}}
			}
			// No server listens there: the index's informer retries in the
			// background until ctx is done.
			h := &fakeHandle{client: client, kubeConfig: &rest.Config{Host: "http://127.0.0.1:1"}}
			args := defaultArgs(func(a *config.MaintenanceWindowArgs) { a.Karpenter = tc.enabled })
			check, err := window.New(args)
			if err != nil {
				t.Fatal(err)
			}
			watchNodeClaims(ctx, h, check, args.Karpenter)
			if got := check.Sources().Carries(karpenterNode); got != tc.want {
				t.Errorf("a node Karpenter made carries a signal: %v, want %v", got, tc.want)
			}
		})
	}
}
