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
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"k8s.io/klog/v2"
)

// maxErrorBody caps what an error message quotes of a failed response.
const maxErrorBody = 256

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
func NewHTTP(rawURL string, timeout time.Duration) (*HTTP, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("http source: url %q must be an absolute http or https URL", rawURL)
	}
	if timeout <= 0 {
		return nil, fmt.Errorf("http source: timeout %s must be positive", timeout)
	}
	return &HTTP{url: rawURL, redacted: u.Redacted(), timeout: timeout, client: &http.Client{}, now: time.Now}, nil
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
