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

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	genericapifilters "k8s.io/apiserver/pkg/endpoints/filters"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/server"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
	"k8s.io/apiserver/pkg/server/healthz"
	apiserveroptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
	netutils "k8s.io/utils/net"
)

// SecureServing serves /metrics and the health endpoints over HTTPS, as
// kube-scheduler serves its own: every request is authenticated (a bearer
// token by TokenReview; without one, system:anonymous) and authorized by
// SubjectAccessReview (GET on the non-resource URL /metrics), both
// delegated to the API server, so that RBAC says who may scrape. /healthz,
// /livez and /readyz skip authorization, for the kubelet's probes. The
// serving certificate is self-signed in memory unless --tls-cert-file is
// given. Off unless --secure-port is set: the manifests set it.
type SecureServing struct {
	serving *apiserveroptions.SecureServingOptions
	authn   *apiserveroptions.DelegatingAuthenticationOptions
	authz   *apiserveroptions.DelegatingAuthorizationOptions
}

// NewSecureServing is a SecureServing whose self-signed certificate is
// named pairName.
func NewSecureServing(pairName string) *SecureServing {
	s := &SecureServing{
		serving: apiserveroptions.NewSecureServingOptions(),
		authn:   apiserveroptions.NewDelegatingAuthenticationOptions(),
		authz:   apiserveroptions.NewDelegatingAuthorizationOptions(),
	}
	s.serving.BindPort = 0
	s.serving.ServerCert.CertDirectory = ""
	s.serving.ServerCert.PairName = pairName
	// Bearer tokens only by default: no client certificates, so no read
	// of kube-system/extension-apiserver-authentication, and no Role there.
	s.authn.SkipInClusterLookup = true
	return s
}

// WithSecureServing adds the secure serving flags to cmd, which must have
// a --kubeconfig flag, and starts the server before cmd runs; the server
// stops once cmd has returned.
func WithSecureServing(cmd *cobra.Command, pairName string) *cobra.Command {
	s := NewSecureServing(pairName)
	s.AddFlags(cmd.Flags())
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		ctx, cancel := context.WithCancel(c.Context())
		kubeconfig, _ := c.Flags().GetString("kubeconfig")
		stopped, err := s.Start(ctx, kubeconfig)
		if err != nil {
			cancel()
			return err
		}
		defer func() {
			cancel()
			<-stopped
		}()
		return run(c, args)
	}
	return cmd
}

// AddFlags registers --secure-port, --bind-address, the TLS flags and the
// delegated authentication and authorization flags on fs.
func (s *SecureServing) AddFlags(fs *pflag.FlagSet) {
	s.serving.AddFlags(fs)
	s.authn.AddFlags(fs)
	s.authz.AddFlags(fs)
	if f := fs.Lookup("secure-port"); f != nil {
		f.Usage = "The port of /metrics, /healthz, /livez and /readyz over HTTPS, with delegated authentication and authorization (RBAC: get on the non-resource URL /metrics); 0: no HTTPS server."
	}
}

// Start binds the secure port and serves until ctx is done; stopped is
// closed once the server has stopped. The TokenReviews and
// SubjectAccessReviews use kubeconfig (the controller's --kubeconfig; empty:
// the in-cluster configuration) unless --authentication-kubeconfig or
// --authorization-kubeconfig name another. Without credentials it fails:
// it never serves /metrics to whoever asks.
func (s *SecureServing) Start(ctx context.Context, kubeconfig string) (stopped <-chan struct{}, err error) {
	if s.serving.BindPort == 0 && s.serving.Listener == nil {
		done := make(chan struct{})
		close(done)
		return done, nil
	}
	var errs []error
	for _, e := range [][]error{s.serving.Validate(), s.authn.Validate(), s.authz.Validate()} {
		errs = append(errs, e...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if s.authn.RemoteKubeConfigFile == "" {
		s.authn.RemoteKubeConfigFile = kubeconfig
	}
	if s.authz.RemoteKubeConfigFile == "" {
		s.authz.RemoteKubeConfigFile = kubeconfig
	}
	if err := s.serving.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
		return nil, fmt.Errorf("--secure-port: serving certificate: %w", err)
	}
	var info *server.SecureServingInfo
	if err := s.serving.ApplyTo(&info); err != nil {
		return nil, fmt.Errorf("--secure-port: %w", err)
	}
	defer func() {
		if err != nil {
			_ = info.Listener.Close()
		}
	}()
	var authn server.AuthenticationInfo
	if err := s.authn.ApplyTo(&authn, info, nil); err != nil {
		return nil, fmt.Errorf("--secure-port: delegated authentication (--authentication-kubeconfig): %w", err)
	}
	var authz server.AuthorizationInfo
	if err := s.authz.ApplyTo(&authz); err != nil {
		return nil, fmt.Errorf("--secure-port: delegated authorization (--authorization-kubeconfig): %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", legacyregistry.Handler())
	healthz.InstallHandler(mux)
	healthz.InstallLivezHandler(mux)
	healthz.InstallReadyzHandler(mux)
	resolver := &apirequest.RequestInfoFactory{}
	var handler http.Handler = mux
	handler = genericapifilters.WithAuthorization(handler, authz.Authorizer, scheme.Codecs)
	handler = genericapifilters.WithAuthentication(handler, authn.Authenticator, genericapifilters.Unauthorized(scheme.Codecs), nil, nil)
	handler = genericapifilters.WithRequestInfo(handler, resolver)
	handler = genericfilters.WithPanicRecovery(handler, resolver)
	stopped, _, err = info.Serve(handler, 0, ctx.Done())
	if err != nil {
		return nil, fmt.Errorf("--secure-port: %w", err)
	}
	klog.FromContext(ctx).Info("Serving /metrics and the health endpoints over HTTPS", "address", info.Listener.Addr().String())
	return stopped, nil
}
