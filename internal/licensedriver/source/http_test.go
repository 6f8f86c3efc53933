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

package source

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const oneFeature = `{"features": [{"name": "MATLAB", "total": 10, "inUse": 3}]}`

// caFile writes the certificate of srv, a TLS test server, into a PEM file.
func caFile(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ca.pem")
	data := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// otherCAFile writes a PEM file of a self-signed authority that no test
// server's certificate chains to (httptest's servers share one certificate).
func otherCAFile(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "another authority"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "other-ca.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func serveFeature(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(oneFeature)) }

func TestHTTPCAFile(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(serveFeature))
	// Not the handshakes refused on stderr.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	defer srv.Close()

	for _, tc := range []struct {
		name    string
		caFile  string
		wantErr string // with URL for the server's URL
	}{{
		name:   "trusted through caFile",
		caFile: caFile(t, srv),
	}, {
		name:    "untrusted without caFile",
		wantErr: `http source: Get "URL/seats": tls: failed to verify certificate: x509: certificate signed by unknown authority`,
	}, {
		// caFile replaces the system's pool: another authority is not the server's.
		name:    "untrusted with another caFile",
		caFile:  otherCAFile(t),
		wantErr: `http source: Get "URL/seats": tls: failed to verify certificate: x509: certificate signed by unknown authority`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewHTTP(srv.URL+"/seats", 10*time.Second, tc.caFile)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Read(context.Background())
			want := strings.ReplaceAll(tc.wantErr, "URL", srv.URL)
			if diff := cmp.Diff(want, errString(err)); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if err == nil && got.Features["MATLAB"].Total != 10 {
				t.Errorf("features %+v, want MATLAB's 10 seats", got.Features)
			}
		})
	}
}

func TestNewHTTPCAFileErrors(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "key.pem")
	if err := os.WriteFile(notPEM, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1}}), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	for _, tc := range []struct {
		url, caFile, wantErr string
	}{{
		url:     "http://licsrv/seats",
		caFile:  notPEM,
		wantErr: "http source: caFile " + notPEM + " is only valid with an https url, not http://licsrv/seats",
	}, {
		url:     "https://licsrv/seats",
		caFile:  missing,
		wantErr: "http source: caFile: open " + missing + ": no such file or directory",
	}, {
		url:     "https://licsrv/seats",
		caFile:  notPEM,
		wantErr: "http source: caFile " + notPEM + " must hold at least one PEM certificate, it holds none",
	}} {
		_, err := NewHTTP(tc.url, time.Second, tc.caFile)
		if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
			t.Errorf("%s, %s: error (-want +got):\n%s", tc.url, tc.caFile, diff)
		}
	}
}

// TestHTTPRedirects: a redirect is followed on the URL's scheme, host and
// port only.
func TestHTTPRedirects(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(serveFeature))
	defer other.Close()
	otherTLS := httptest.NewTLSServer(http.HandlerFunc(serveFeature))
	defer otherTLS.Close()

	var to string // where /seats redirects to; the server's URL replaces SELF
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/seats" {
			http.Redirect(w, r, strings.ReplaceAll(to, "SELF", "https://"+r.Host), http.StatusFound)
			return
		}
		serveFeature(w, r)
	}))
	defer srv.Close()
	self := strings.TrimPrefix(srv.URL, "https://")
	_, port, _ := strings.Cut(self, ":")

	for _, tc := range []struct {
		name, to string
		wantErr  string // with URL for the server's URL
	}{{
		name: "a path on the same server",
		to:   "/v2/seats",
	}, {
		name: "an absolute URL of the same server",
		to:   "SELF/v2/seats",
	}, {
		name: "the same server, host in upper case",
		to:   "https://" + strings.ToUpper(self) + "/v2/seats",
	}, {
		name:    "another port",
		to:      otherTLS.URL + "/seats",
		wantErr: "http source: GET URL/seats: redirect to " + otherTLS.URL + "/seats refused: a redirect must keep the scheme, host and port of URL",
	}, {
		name:    "another host, same port",
		to:      "https://localhost:" + port + "/seats",
		wantErr: "http source: GET URL/seats: redirect to https://localhost:" + port + "/seats refused: a redirect must keep the scheme, host and port of URL",
	}, {
		name:    "https to http, same host and port",
		to:      "http://" + self + "/seats",
		wantErr: "http source: GET URL/seats: redirect to http://" + self + "/seats refused: a redirect must keep the scheme, host and port of URL",
	}, {
		name:    "https to http on another server",
		to:      other.URL + "/seats",
		wantErr: "http source: GET URL/seats: redirect to " + other.URL + "/seats refused: a redirect must keep the scheme, host and port of URL",
	}, {
		name:    "the password is not shown",
		to:      "https://driver:s3cret@localhost:" + port + "/seats",
		wantErr: "http source: GET URL/seats: redirect to https://driver:xxxxx@localhost:" + port + "/seats refused: a redirect must keep the scheme, host and port of URL",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			to = tc.to
			s, err := NewHTTP(srv.URL+"/seats", 10*time.Second, caFile(t, srv))
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Read(context.Background())
			want := strings.ReplaceAll(tc.wantErr, "URL", srv.URL)
			if diff := cmp.Diff(want, errString(err)); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if err == nil && got.Features["MATLAB"].Total != 10 {
				t.Errorf("features %+v, want MATLAB's 10 seats", got.Features)
			}
		})
	}
}

func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"https://lic/seats", "https://LIC:443/v2", true},
		{"http://lic:80/seats", "http://lic/v2", true},
		{"http://[::1]:8080/", "http://[::1]:8080/x", true},
		{"https://lic/seats", "http://lic:443/seats", false},
		{"https://lic/seats", "https://lic:8443/seats", false},
		{"https://lic/seats", "https://lic.example.com/seats", false},
	} {
		a, b := mustURL(t, tc.a), mustURL(t, tc.b)
		if got := sameOrigin(a, b); got != tc.want {
			t.Errorf("sameOrigin(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
