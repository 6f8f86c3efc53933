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
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/internal/filelimit"
)

// maxErrorBody caps what an error message quotes of a failed response.
const maxErrorBody = 256

// maxCABytes caps a CA bundle; the system's whole bundle is some 200 KiB.
const maxCABytes = 4 << 20

// maxRedirects is the most redirects followed, as net/http's default.
const maxRedirects = 10

// HTTP reads the JSON document of ParseJSON with a GET.
type HTTP struct {
	url      string
	redacted string // for messages: no password
	timeout  time.Duration
	client   *http.Client
	now      func() time.Time
}

var _ Source = &HTTP{}

// NewHTTP returns a source that GETs rawURL (http or https) with timeout.
// caFile, when not "", is a PEM bundle of the certificate authorities that
// an https server's certificate must chain to, instead of the system's; it
// is read once, here. A redirect is followed only to rawURL's scheme, host
// and port.
func NewHTTP(rawURL string, timeout time.Duration, caFile string) (*HTTP, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("http source: url %q must be an absolute http or https URL", rawURL)
	}
	if timeout <= 0 {
		return nil, fmt.Errorf("http source: timeout %s must be positive", timeout)
	}
	s := &HTTP{url: rawURL, redacted: u.Redacted(), timeout: timeout, now: time.Now}
	s.client = &http.Client{CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if !sameOrigin(u, req.URL) {
			return &redirectError{to: req.URL.Redacted(), origin: (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()}
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		return nil
	}}
	if caFile != "" {
		if u.Scheme != "https" {
			return nil, fmt.Errorf("http source: caFile %s is only valid with an https url, not %s", caFile, s.redacted)
		}
		pool, err := readCAFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("http source: %w", err)
		}
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		s.client.Transport = t
	}
	return s, nil
}

// readCAFile reads a PEM bundle of at least one certificate.
func readCAFile(path string) (*x509.CertPool, error) {
	data, err := filelimit.Read(path, maxCABytes, "CA bundle")
	if err != nil {
		return nil, fmt.Errorf("caFile: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("caFile %s must hold at least one PEM certificate, it holds none", path)
	}
	return pool, nil
}

// redirectError is a redirect refused.
type redirectError struct{ to, origin string }

func (e *redirectError) Error() string {
	return fmt.Sprintf("redirect to %s refused: a redirect must keep the scheme, host and port of %s", e.to, e.origin)
}

// sameOrigin reports whether a and b have the same scheme, host (in any
// case) and port (the scheme's when none is given).
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// Read GETs the document once.
func (s *HTTP) Read(ctx context.Context) (Reading, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return Reading{}, fmt.Errorf("http source: GET %s: %w", s.redacted, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if re := (*redirectError)(nil); errors.As(err, &re) {
		// Not the *url.Error: it quotes the Location header as sent.
		return Reading{}, fmt.Errorf("http source: GET %s: %w", s.redacted, re)
	}
	if err != nil {
		// The *url.Error names the URL already, without its password.
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return Reading{}, fmt.Errorf("http source: no answer within the timeout of %s: %w", s.timeout, err)
		}
		return Reading{}, fmt.Errorf("http source: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody+1))
		msg := ""
		if t := strings.TrimSpace(strings.ToValidUTF8(string(b), "?")); t != "" {
			msg = fmt.Sprintf(": %q", truncate(t, maxErrorBody))
		}
		return Reading{}, fmt.Errorf("http source: GET %s: status %s, want 2xx%s", s.redacted, resp.Status, msg)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxJSONBytes+1))
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return Reading{}, fmt.Errorf("http source: GET %s: the body did not arrive within the timeout of %s: %w", s.redacted, s.timeout, err)
		}
		return Reading{}, fmt.Errorf("http source: GET %s: reading the body: %w", s.redacted, err)
	}
	if len(data) > MaxJSONBytes {
		return Reading{}, fmt.Errorf("http source: GET %s: the body is larger than %d MiB, the most read", s.redacted, MaxJSONBytes>>20)
	}
	r, err := ParseJSON(data, s.now())
	if err != nil {
		return Reading{}, fmt.Errorf("http source: GET %s: %w", s.redacted, err)
	}
	klog.FromContext(ctx).V(5).Info("Read the http source", "url", s.redacted, "features", len(r.Features))
	return r, nil
}
