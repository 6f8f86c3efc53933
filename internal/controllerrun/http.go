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
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
)

// AddHTTPAddressFlag registers --http-address on fs, for ServeHTTP.
func AddHTTPAddressFlag(fs *pflag.FlagSet, address *string) {
	fs.StringVar(address, "http-address", "127.0.0.1:8080", "Address of plain-HTTP /metrics and /healthz, loopback by default (the manifests serve them on --secure-port instead); empty: no server.")
}

// ServeHTTP serves the legacy registry's /metrics and an always-ok /healthz
// over plain HTTP on address until ctx ends. Only the listen is checked: an
// error naming --http-address; a later failure is logged.
func ServeHTTP(ctx context.Context, address string) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", legacyregistry.Handler())
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	l, err := net.Listen("tcp", address)
	if err != nil {
		return fmt.Errorf("--http-address: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			klog.FromContext(ctx).Error(err, "HTTP server failed")
		}
	}()
	return nil
}
