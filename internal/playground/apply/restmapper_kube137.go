//go:build !kube1.36 && !kube1.35

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

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
)

// This file bridges client-go's contextual discovery mapper
// (NewDeferredDiscoveryRESTMapperWithContext, RESTMappingWithContext,
// ResetWithContext), which exists since 1.37.

func newDeferredMapper(dc *discovery.DiscoveryClient) *restmapper.DeferredDiscoveryRESTMapper {
	return restmapper.NewDeferredDiscoveryRESTMapperWithContext(memory.NewMemCacheClientWithContext(dc))
}

func restMapping(ctx context.Context, m *restmapper.DeferredDiscoveryRESTMapper, gk schema.GroupKind, version string) (*meta.RESTMapping, error) {
	return m.RESTMappingWithContext(ctx, gk, version)
}

func resetMapper(ctx context.Context, m *restmapper.DeferredDiscoveryRESTMapper) {
	m.ResetWithContext(ctx)
}
