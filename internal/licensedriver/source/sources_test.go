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
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
)

// helperEnv makes the test binary act as the lmstat command (see TestMain).
const helperEnv = "SOURCE_TEST_LMSTAT"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(lmstatHelper(mode))
	}
	os.Exit(m.Run())
}

// lmstatHelper plays lmstat: prints a report, fails, hangs or floods.
func lmstatHelper(mode string) int {
	switch {
	case strings.HasPrefix(mode, "print="):
		data, err := os.ReadFile(strings.TrimPrefix(mode, "print="))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		fmt.Fprintln(os.Stderr, "lmutil: warning: license file has CRLF line endings")
		_, _ = os.Stdout.Write(data)
		return 0
	case mode == "fail":
		fmt.Fprint(os.Stderr, strings.Repeat("lmgrd is not running: License server machine is down or not responding.\n", 100))
		return 1
	case mode == "hang":
		time.Sleep(time.Minute)
		return 0
	case mode == "flood":
		line := []byte(strings.Repeat("x", 1023) + "\n")
		for {
			if _, err := os.Stdout.Write(line); err != nil {
				return 3
			}
		}
	}
	return 4
}

func lmstatSource(t *testing.T, mode string, timeout time.Duration) *LMStat {
	t.Helper()
	t.Setenv(helperEnv, mode)
	s, err := NewLMStat([]string{os.Args[0], "lmstat", "-a"}, timeout)
	if err != nil {
		t.Fatal(err)
	}
	s.now = func() time.Time { return at("2026-11-30 09:40") }
	return s
}

func TestLMStatRead(t *testing.T) {
	report, err := filepath.Abs(filepath.Join("testdata", "lmstat-matlab.txt"))
	if err != nil {
		t.Fatal(err)
	}
	stderrQuote := strings.Repeat(`lmgrd is not running: License server machine is down or not responding.\n`, 14)
	for _, tc := range []struct {
		name         string
		mode         string
		timeout      time.Duration
		wantFeatures int
		wantErr      string // a prefix
	}{{
		name:         "a report",
		mode:         "print=" + report,
		timeout:      10 * time.Second,
		wantFeatures: 4,
	}, {
		name:    "exit status 1, stderr quoted and truncated",
		mode:    "fail",
		timeout: 10 * time.Second,
		wantErr: "lmstat command " + os.Args[0] + `: exit status 1 (stderr: "` + stderrQuote,
	}, {
		name:    "timeout",
		mode:    "hang",
		timeout: 300 * time.Millisecond,
		wantErr: "lmstat command " + os.Args[0] + " did not finish within its timeout of 300ms",
	}, {
		name:    "output over the cap",
		mode:    "flood",
		timeout: time.Minute,
		wantErr: "lmstat command " + os.Args[0] + " printed more than 16 MiB, the most read; it was stopped",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s := lmstatSource(t, tc.mode, tc.timeout)
			start := time.Now()
			got, err := s.Read(context.Background())
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one starting with %q", err, tc.wantErr)
				}
				if d := time.Since(start); d > 30*time.Second {
					t.Errorf("Read took %s: the command was not stopped", d)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Features) != tc.wantFeatures || !got.Time.Equal(at("2026-11-30 09:40")) {
				t.Errorf("reading %+v, want %d features at the source's time", got, tc.wantFeatures)
			}
		})
	}
}

func TestLMStatStderrTruncated(t *testing.T) {
	s := lmstatSource(t, "fail", 10*time.Second)
	_, err := s.Read(context.Background())
	if err == nil {
		t.Fatal("no error")
	}
	// 100 lines of stderr: the message quotes the first KiB and says so.
	if n := len(err.Error()); n > maxStderrQuote+300 || !strings.Contains(err.Error(), `responding.\nlmgrd`) || !strings.HasSuffix(err.Error(), `...")`) {
		t.Errorf("error of %d bytes: %v", n, err)
	}
}

func TestLMStatCommandMissing(t *testing.T) {
	s, err := NewLMStat([]string{filepath.Join(t.TempDir(), "lmutil"), "lmstat", "-a"}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read(context.Background()); err == nil || !strings.Contains(err.Error(), "no such file or directory") {
		t.Errorf("error %v, want the command not found", err)
	}
}

func TestHTTPRead(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("testdata", "http-features.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name         string
		handler      http.HandlerFunc
		timeout      time.Duration
		wantFeatures int
		wantErr      string // with URL for the server's URL
	}{{
		name:         "200",
		handler:      func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(body) },
		wantFeatures: 3,
	}, {
		name: "204, no document",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNoContent)
		},
		wantErr: "http source: GET URL/seats: the document is not the JSON expected: unexpected end of JSON input",
	}, {
		name: "503 names the status, the URL and the body",
		handler: func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "license server unreachable", http.StatusServiceUnavailable)
		},
		wantErr: `http source: GET URL/seats: status 503 Service Unavailable, want 2xx: "license server unreachable"`,
	}, {
		name: "404, long body truncated",
		handler: func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, strings.Repeat("n", 1000), http.StatusNotFound)
		},
		wantErr: `http source: GET URL/seats: status 404 Not Found, want 2xx: "` + strings.Repeat("n", maxErrorBody) + `..."`,
	}, {
		name: "a redirect is followed",
		handler: func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/seats" {
				http.Redirect(w, r, "/v2/seats", http.StatusFound)
				return
			}
			_, _ = w.Write(body)
		},
		wantFeatures: 3,
	}, {
		name: "a bad document names the URL and the field",
		handler: func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"features": [{"name": "A", "total": 1, "inUse": 0, "users": 3}]}`))
		},
		wantErr: `http source: GET URL/seats: unknown field "features[0].users"`,
	}, {
		name: "a body over 4 MiB",
		handler: func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"features": [`))
			_, _ = w.Write([]byte(strings.Repeat(" ", MaxJSONBytes)))
			_, _ = w.Write([]byte(`]}`))
		},
		wantErr: "http source: GET URL/seats: the body is larger than 4 MiB, the most read",
	}, {
		name: "no answer within the timeout",
		handler: func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(time.Minute):
			}
		},
		timeout: 200 * time.Millisecond,
		wantErr: `http source: no answer within the timeout of 200ms: Get "URL/seats": context deadline exceeded`,
	}, {
		name: "a body that stops coming",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "1000")
			_, _ = w.Write([]byte(`{"features": [`))
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(time.Minute):
			}
		},
		timeout: 200 * time.Millisecond,
		wantErr: "http source: GET URL/seats: the body did not arrive within the timeout of 200ms: context deadline exceeded",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			if tc.timeout == 0 {
				tc.timeout = 10 * time.Second
			}
			s, err := NewHTTP(srv.URL+"/seats", tc.timeout, "")
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Read(context.Background())
			want := strings.ReplaceAll(tc.wantErr, "URL", srv.URL)
			if diff := cmp.Diff(want, errString(err)); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if err == nil && len(got.Features) != tc.wantFeatures {
				t.Errorf("%d features, want %d", len(got.Features), tc.wantFeatures)
			}
		})
	}
}

func TestHTTPErrorHidesPassword(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	u := strings.Replace(srv.URL, "http://", "http://driver:s3cret@", 1)
	s, err := NewHTTP(u, time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Read(context.Background())
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "401 Unauthorized") {
		t.Errorf("error %v, want the status without the password", err)
	}
}

func TestStaticRead(t *testing.T) {
	s, err := NewStatic(map[string]int{"MATLAB": 10, "SIMULINK": 0})
	if err != nil {
		t.Fatal(err)
	}
	s.now = func() time.Time { return at("2026-11-30 09:40") }
	want := Reading{Features: map[string]Feature{"MATLAB": {Total: 10}, "SIMULINK": {}}, Time: at("2026-11-30 09:40")}
	got, _ := s.Read(context.Background())
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reading (-want +got):\n%s", diff)
	}
	// The caller owns what it is given.
	got.Features["MATLAB"] = Feature{Total: 1}
	again, _ := s.Read(context.Background())
	if diff := cmp.Diff(want, again); diff != "" {
		t.Errorf("second reading (-want +got):\n%s", diff)
	}
}

func TestNew(t *testing.T) {
	features := []config.Feature{{Name: "MATLAB", Seats: ptr.To[int32](10)}, {Name: "SIMULINK", Seats: ptr.To[int32](2)}}
	for _, tc := range []struct {
		name    string
		source  config.Source
		feats   []config.Feature
		want    string // the source's type
		wantErr string
	}{{
		name:   "static",
		source: config.Source{Static: &config.StaticSource{}},
		feats:  features,
		want:   "*source.Static",
	}, {
		name:   "lmstat, timeout not defaulted",
		source: config.Source{LMStat: &config.LMStatSource{Command: []string{"lmutil", "lmstat", "-a"}}},
		feats:  features,
		want:   "*source.LMStat",
	}, {
		name:   "http",
		source: config.Source{HTTP: &config.HTTPSource{URL: "https://licsrv.example.com/seats", Timeout: metav1.Duration{Duration: time.Second}}},
		feats:  features,
		want:   "*source.HTTP",
	}, {
		name:    "none",
		feats:   features,
		wantErr: "source: exactly one of static, lmstat and http must be set, not 0",
	}, {
		name:    "two",
		source:  config.Source{Static: &config.StaticSource{}, HTTP: &config.HTTPSource{URL: "https://licsrv.example.com/seats"}},
		feats:   features,
		wantErr: "source: exactly one of static, lmstat and http must be set, not 2",
	}, {
		name:    "static without seats",
		source:  config.Source{Static: &config.StaticSource{}},
		feats:   []config.Feature{{Name: "MATLAB"}},
		wantErr: "features[0].seats: required by the static source",
	}, {
		name:    "lmstat without a command",
		source:  config.Source{LMStat: &config.LMStatSource{}},
		feats:   features,
		wantErr: "lmstat source: no command",
	}, {
		name:    "http with a bad URL",
		source:  config.Source{HTTP: &config.HTTPSource{URL: "licsrv:8080/seats"}},
		feats:   features,
		wantErr: `http source: url "licsrv:8080/seats" must be an absolute http or https URL`,
	}, {
		name:    "http with its caFile missing",
		source:  config.Source{HTTP: &config.HTTPSource{URL: "https://licsrv/seats", CAFile: "/nonexistent/ca.pem"}},
		feats:   features,
		wantErr: "http source: caFile: open /nonexistent/ca.pem: no such file or directory",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(&config.Configuration{Features: tc.feats, Source: tc.source})
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if err == nil && fmt.Sprintf("%T", s) != tc.want {
				t.Errorf("source %T, want %s", s, tc.want)
			}
		})
	}
}

func TestLMStatReadCanceled(t *testing.T) {
	s := lmstatSource(t, "hang", time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	_, err := s.Read(ctx)
	if want := "lmstat command " + os.Args[0] + " stopped: context canceled"; errString(err) != want {
		t.Errorf("error %v, want %q", err, want)
	}
}
