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
	"fmt"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// mapperNew maps kinds to resources as kubectl does: discovery, kept in
// memory until reset (a CRD applied) or a kind is not found.
func mapperNew(cfg *rest.Config, httpClient *http.Client) (*restmapper.DeferredDiscoveryRESTMapper, error) {
	dc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	return newDeferredMapper(dc), nil
}

// mapping is the resource of gvk. An unknown kind is most often a custom
// resource whose CRD is missing or comes after it.
func (a *Applier) mapping(ctx context.Context, gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	switch {
	case gvk.Kind == "":
		return nil, fmt.Errorf("kind is required")
	case gvk.Version == "":
		return nil, fmt.Errorf("apiVersion is required for kind %s", gvk.Kind)
	}
	m, err := restMapping(ctx, a.mapper, gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		return nil, fmt.Errorf("no resource for kind %s in %s: is its CRD in the scenario before it?", gvk.Kind, gvk.GroupVersion())
	}
	if err != nil {
		return nil, fmt.Errorf("mapping kind %s in %s: %w", gvk.Kind, gvk.GroupVersion(), err)
	}
	return m, nil
}

// mapperAwaitLimit bounds mapperAwait even when ctx does not: discovery
// serves an Established CRD's kind within a second or so.
const mapperAwaitLimit = 30 * time.Second

// mapperAwait resets the mapper until it maps gk in every version, or ctx
// ends. Discovery offers no watch: this retries with a backoff from 10 ms
// to 1 s, usually once or twice.
func (a *Applier) mapperAwait(ctx context.Context, gk schema.GroupKind, versions []string) error {
	ctx, cancel := context.WithTimeout(ctx, mapperAwaitLimit)
	defer cancel()
	delay := 10 * time.Millisecond
	for {
		resetMapper(ctx, a.mapper)
		var err error
		for _, v := range versions {
			if _, err = restMapping(ctx, a.mapper, gk, v); err != nil {
				break
			}
		}
		switch {
		case err == nil:
			return nil
		case !meta.IsNoMatchError(err):
			return fmt.Errorf("mapping kind %s: %w", gk, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for kind %s to be served: %w (last: %w)", gk, ctx.Err(), err)
		case <-time.After(delay):
		}
		delay = min(2*delay, time.Second)
	}
}
