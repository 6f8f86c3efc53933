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

package apply

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestMapping(t *testing.T) {
	ctx := context.Background()
	a, _ := applyTestApplier(t)
	type mapped struct {
		Resource schema.GroupVersionResource
		Scope    meta.RESTScopeName
	}
	tests := []struct {
		name    string
		gvk     schema.GroupVersionKind
		want    mapped
		wantErr string
	}{
		{
			name: "core namespaced",
			gvk:  schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
			want: mapped{Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Scope: meta.RESTScopeNameNamespace},
		},
		{
			name: "group cluster-scoped",
			gvk:  schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"},
			want: mapped{Resource: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, Scope: meta.RESTScopeNameRoot},
		},
		{
			name:    "unknown kind",
			gvk:     schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Foo"},
			wantErr: "no resource for kind Foo in example.com/v1: is its CRD in the scenario before it?",
		},
		{
			name:    "known kind, unknown version",
			gvk:     schema.GroupVersionKind{Group: "apps", Version: "v9", Kind: "Deployment"},
			wantErr: "no resource for kind Deployment in apps/v9: is its CRD in the scenario before it?",
		},
		{name: "no apiVersion", gvk: schema.GroupVersionKind{Kind: "ConfigMap"}, wantErr: "apiVersion is required for kind ConfigMap"},
		{name: "no kind", gvk: schema.GroupVersionKind{Version: "v1"}, wantErr: "kind is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := a.mapping(ctx, tt.gvk)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("mapped to %v", m.Resource)
				}
				if diff := cmp.Diff(tt.wantErr, err.Error()); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, mapped{Resource: m.Resource, Scope: m.Scope.Name()}); diff != "" {
				t.Errorf("mapping (-want +got):\n%s", diff)
			}
		})
	}
}
