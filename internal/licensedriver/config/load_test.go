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

package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestLoadExample(t *testing.T) {
	got, err := Load(filepath.Join("testdata", "example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"LM_LICENSE_FILE": "27000@licsrv.example.com"}
	want := &Configuration{
		TypeMeta: metav1.TypeMeta{APIVersion: APIVersion, Kind: Kind},
		Features: []Feature{{
			Name:            "MATLAB",
			Pool:            "matlab",
			ResourceName:    "licenses.adminsched.io/matlab",
			DeviceClassName: "matlab.licenses.adminsched.io",
			Env:             env,
		}, {
			Name:            "Distrib_Computing_Toolbox",
			Pool:            "matlab-parallel",
			ResourceName:    "licenses.adminsched.io/matlab-parallel",
			DeviceClassName: "matlab-parallel.licenses.adminsched.io",
			Seats:           ptr.To[int32](4),
			Env:             map[string]string{"LM_LICENSE_FILE": "27000@licsrv.example.com", "MLM_LICENSE_FILE": "27000@licsrv.example.com"},
		}},
		Source: Source{LMStat: &LMStatSource{
			Command: []string{"/opt/flexlm/lmutil", "lmstat", "-a", "-c", "27000@licsrv.example.com"},
			Timeout: metav1.Duration{Duration: DefaultTimeout},
		}},
		PollInterval: metav1.Duration{Duration: time.Minute},
		SettleWindow: &metav1.Duration{Duration: DefaultSettleWindow},
		StaleAfter:   metav1.Duration{Duration: DefaultStaleAfter},
		OnStale:      Keep,
		Devices:      PerSeat,
		MaxSeats:     DefaultMaxSeats,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("configuration (-want +got):\n%s", diff)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("# "+strings.Repeat("x", MaxFileBytes)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("kind: Other\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, wantErr string
	}{{
		name:    "over MaxFileBytes",
		path:    big,
		wantErr: big + " is larger than 4 MiB (4194304 bytes), the most a license driver configuration may hold",
	}, {
		name:    "missing",
		path:    filepath.Join(dir, "none.yaml"),
		wantErr: "open " + filepath.Join(dir, "none.yaml") + ": no such file or directory",
	}, {
		name:    "a directory",
		path:    dir,
		wantErr: dir + ": read " + dir + ": is a directory",
	}, {
		name:    "invalid: the error names the file",
		path:    bad,
		wantErr: bad + `: [apiVersion: Unsupported value: "": supported values: "licenses.adminsched.io/v1alpha1", kind: Unsupported value: "Other": supported values: "LicenseDriverConfiguration", source: Invalid value: 0: exactly one of static, lmstat and http must be set, features: Required value: at least one license feature]`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.path)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

const head = "apiVersion: licenses.adminsched.io/v1alpha1\nkind: LicenseDriverConfiguration\n"

// static is a valid file but for what a case appends to its one feature or
// to the top level.
func static(feature, top string) string {
	return head + "source: {static: {}}\nfeatures:\n- name: MATLAB\n  seats: 10\n" + feature + top
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		wantErr string
	}{{
		name:    "unknown field, with its path",
		in:      static("  seat: 3\n", ""),
		wantErr: `unknown field "features[0].seat"`,
	}, {
		name:    "a field in the wrong case",
		in:      static("", "PollInterval: 1m\n"),
		wantErr: `unknown field "PollInterval"`,
	}, {
		name:    "duplicate field",
		in:      static("  seats: 20\n", ""),
		wantErr: `yaml: unmarshal errors:` + "\n" + `  line 7: key "seats" already set in map`,
	}, {
		name:    "duplicate top-level field",
		in:      static("", "source: {http: {url: \"https://licsrv/seats\"}}\n"),
		wantErr: `yaml: unmarshal errors:` + "\n" + `  line 7: key "source" already set in map`,
	}, {
		name:    "two documents",
		in:      static("", "---\n"+static("", "")),
		wantErr: "the file holds 2 YAML documents; the configuration is one",
	}, {
		name:    "two documents, the second empty, are one",
		in:      static("", "---\n# nothing\n"),
		wantErr: "",
	}, {
		name:    "YAML 1.1 word as an env value",
		in:      static("  env: {LM_LICENSE_FILE: on}\n", ""),
		wantErr: `features[0].env.LM_LICENSE_FILE: Invalid value: "on": this unquoted value is a YAML 1.1 boolean (true) to the decoder; quote it ("on") if a string is meant, or write true if a boolean is`,
	}, {
		name:    "YAML 1.1 word as a name",
		in:      head + "source: {static: {}}\nfeatures:\n- name: yes\n  seats: 1\n",
		wantErr: `features[0].name: Invalid value: "yes": this unquoted value is a YAML 1.1 boolean (true) to the decoder; quote it ("yes") if a string is meant, or write true if a boolean is`,
	}, {
		name:    "a number where a string is wanted",
		in:      static("  env: {PORT: 27000}\n", ""),
		wantErr: "json: cannot unmarshal number into Go struct field Feature.features.env of type string",
	}, {
		name:    "not YAML",
		in:      "features: [\n",
		wantErr: "yaml: line 1: did not find expected node content",
	}, {
		name:    "missing source",
		in:      head + "features:\n- name: MATLAB\n  seats: 10\n",
		wantErr: "source: Invalid value: 0: exactly one of static, lmstat and http must be set",
	}, {
		name:    "two sources",
		in:      head + "source: {static: {}, http: {url: \"https://licsrv/seats\"}}\nfeatures:\n- name: MATLAB\n  seats: 10\n",
		wantErr: "source: Invalid value: 2: exactly one of static, lmstat and http must be set",
	}, {
		name:    "lmstat without a command",
		in:      head + "source: {lmstat: {command: []}}\nfeatures:\n- name: MATLAB\n",
		wantErr: "source.lmstat.command: Required value: the lmstat command and its arguments, e.g. [lmutil, lmstat, -a, -c, 27000@licsrv]",
	}, {
		name:    "bad URL: no scheme",
		in:      head + "source: {http: {url: \"licsrv:8080/seats\"}}\nfeatures:\n- name: MATLAB\n",
		wantErr: `source.http.url: Invalid value: "licsrv:8080/seats": must be an absolute http or https URL`,
	}, {
		name:    "bad URL: another scheme",
		in:      head + "source: {http: {url: \"ftp://licsrv/seats\"}}\nfeatures:\n- name: MATLAB\n",
		wantErr: `source.http.url: Invalid value: "ftp://licsrv/seats": must be an absolute http or https URL`,
	}, {
		name:    "timeout out of range",
		in:      head + "source: {http: {url: \"https://licsrv/seats\", timeout: 11m}}\nfeatures:\n- name: MATLAB\n",
		wantErr: `source.http.timeout: Invalid value: "11m0s": must be between 100ms and 10m`,
	}, {
		name:    "lmstat timeout too short",
		in:      head + "source: {lmstat: {command: [lmutil], timeout: 10ms}}\nfeatures:\n- name: MATLAB\n",
		wantErr: `source.lmstat.timeout: Invalid value: "10ms": must be between 100ms and 10m`,
	}, {
		name:    "static without seats",
		in:      head + "source: {static: {}}\nfeatures:\n- name: MATLAB\n",
		wantErr: "features[0].seats: Required value: the static source serves the seats configured here",
	}, {
		name:    "seats negative",
		in:      static("", "")[:len(static("", ""))-len("10\n")] + "-1\n",
		wantErr: "features[0].seats: Invalid value: -1: must be between 0 and maxSeats (10000)",
	}, {
		name:    "seats over the default maxSeats",
		in:      static("", "")[:len(static("", ""))-len("10\n")] + "10001\n",
		wantErr: "features[0].seats: Invalid value: 10001: must be between 0 and maxSeats (10000)",
	}, {
		name:    "seats over a raised maxSeats",
		in:      head + "maxSeats: 20000\nsource: {static: {}}\nfeatures:\n- name: MATLAB\n  seats: 20001\n",
		wantErr: "features[0].seats: Invalid value: 20001: must be between 0 and maxSeats (20000)",
	}, {
		name:    "maxSeats too large",
		in:      static("", "maxSeats: 100001\n"),
		wantErr: "maxSeats: Invalid value: 100001: must be between 1 and 100000",
	}, {
		name:    "maxSeats negative",
		in:      static("", "maxSeats: -1\n"),
		wantErr: "maxSeats: Invalid value: -1: must be between 1 and 100000",
	}, {
		name:    "seats beyond int32",
		in:      static("", "")[:len(static("", ""))-len("10\n")] + "9999999999\n",
		wantErr: "json: cannot unmarshal number 9999999999 into Go struct field Feature.features.seats of type int32",
	}, {
		name:    "no features",
		in:      head + "source: {static: {}}\nfeatures: []\n",
		wantErr: "features: Required value: at least one license feature",
	}, {
		name:    "a feature without a name",
		in:      head + "source: {static: {}}\nfeatures:\n- seats: 1\n  pool: p\n",
		wantErr: `features[0].name: Required value: the feature's name on the license server`,
	}, {
		name:    "duplicate feature name",
		in:      static("- name: MATLAB\n  seats: 1\n  pool: matlab2\n", ""),
		wantErr: `features[1].name: Duplicate value: "MATLAB"`,
	}, {
		name: "duplicate pool, from two names",
		in:   static("- name: matlab\n  seats: 1\n", ""),
		wantErr: `[features[1].pool: Duplicate value: "matlab", features[1].resourceName: Duplicate value: "licenses.adminsched.io/matlab", ` +
			`features[1].deviceClassName: Duplicate value: "matlab.licenses.adminsched.io"]`,
	}, {
		name:    "duplicate resource name",
		in:      static("  resourceName: example.com/matlab\n- name: Simulink\n  seats: 1\n  resourceName: example.com/matlab\n", ""),
		wantErr: `features[1].resourceName: Duplicate value: "example.com/matlab"`,
	}, {
		name:    "duplicate device class",
		in:      static("  deviceClassName: matlab.example.com\n- name: Simulink\n  seats: 1\n  deviceClassName: matlab.example.com\n", ""),
		wantErr: `features[1].deviceClassName: Duplicate value: "matlab.example.com"`,
	}, {
		name: "a pool from a name that makes none",
		in:   head + "source: {static: {}}\nfeatures:\n- name: MATLAB Parallel\n  seats: 1\n",
		wantErr: `[features[0].pool: Invalid value: "matlab parallel": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*') (set pool when the feature's name does not make one), ` +
			`features[0].resourceName: Invalid value: "licenses.adminsched.io/matlab parallel": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), ` +
			`features[0].deviceClassName: Invalid value: "matlab parallel.licenses.adminsched.io": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')]`,
	}, {
		name:    "a resource name in kubernetes.io",
		in:      static("  resourceName: licenses.kubernetes.io/matlab\n", ""),
		wantErr: `features[0].resourceName: Invalid value: "licenses.kubernetes.io/matlab": must be an extended resource name: <domain>/<name>, not in kubernetes.io`,
	}, {
		name:    "a resource name without a domain",
		in:      static("  resourceName: matlab\n", ""),
		wantErr: `features[0].resourceName: Invalid value: "matlab": must be an extended resource name: <domain>/<name>, not in kubernetes.io`,
	}, {
		name:    "a resource name quota would read as a request",
		in:      static("  resourceName: requests.example.com/matlab\n", ""),
		wantErr: `features[0].resourceName: Invalid value: "requests.example.com/matlab": must not start with "requests.": quota reads that as a request of example.com/matlab`,
	}, {
		name:    "a resource name whose domain is too long once quota prefixes it",
		in:      static("  resourceName: "+strings.Repeat("a.", 122)+"com/matlab\n", ""),
		wantErr: `features[0].resourceName: Invalid value: "` + strings.Repeat("a.", 122) + `com/matlab": prefix part must be no more than 253 bytes (with quota's "requests." before it)`,
	}, {
		name:    "bad env name",
		in:      static("  env: {LM-LICENSE-FILE: 27000@licsrv}\n", ""),
		wantErr: `features[0].env[LM-LICENSE-FILE]: Invalid value: "LM-LICENSE-FILE": must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*)`,
	}, {
		name:    "wrong apiVersion",
		in:      strings.Replace(static("", ""), "v1alpha1", "v1", 1),
		wantErr: `apiVersion: Unsupported value: "licenses.adminsched.io/v1": supported values: "licenses.adminsched.io/v1alpha1"`,
	}, {
		name:    "wrong kind",
		in:      strings.Replace(static("", ""), "kind: LicenseDriverConfiguration", "kind: KubeSchedulerConfiguration", 1),
		wantErr: `kind: Unsupported value: "KubeSchedulerConfiguration": supported values: "LicenseDriverConfiguration"`,
	}, {
		name:    "poll interval under a second",
		in:      static("", "pollInterval: 500ms\n"),
		wantErr: `pollInterval: Invalid value: "500ms": must be between 1s and 24h`,
	}, {
		name:    "poll interval over a day",
		in:      static("", "pollInterval: 25h\nstaleAfter: 24h\n"),
		wantErr: `[pollInterval: Invalid value: "25h0m0s": must be between 1s and 24h, staleAfter: Invalid value: "24h0m0s": must be between 25h0m0s and 24h]`,
	}, {
		name:    "negative settle window",
		in:      static("", "settleWindow: -1s\n"),
		wantErr: `settleWindow: Invalid value: "-1s": must be between 0s and 24h`,
	}, {
		name:    "stale before the next poll",
		in:      static("", "pollInterval: 10m\nstaleAfter: 5m\n"),
		wantErr: `staleAfter: Invalid value: "5m0s": must be between 10m0s and 24h`,
	}, {
		name:    "not a duration",
		in:      static("", "staleAfter: soon\n"),
		wantErr: `time: invalid duration "soon"`,
	}, {
		name:    "onStale",
		in:      static("", "onStale: FailOpen\n"),
		wantErr: `onStale: Unsupported value: "FailOpen": supported values: "FailClosed", "Keep"`,
	}, {
		name:    "devices",
		in:      static("", "devices: shared\n"),
		wantErr: `devices: Unsupported value: "shared": supported values: "Shared", "PerSeat"`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Decode([]byte(tc.in))
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if err != nil && c != nil {
				t.Errorf("a configuration with the error: %+v", c)
			}
		})
	}
}

// TestDecodeValid shows what defaulting does with the least a file may say,
// for each source.
func TestDecodeValid(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want func(c *Configuration)
	}{{
		name: "static",
		in:   static("", ""),
		want: func(c *Configuration) { c.Source = Source{Static: &StaticSource{}} },
	}, {
		name: "http, seats as a cap, quoted YAML 1.1 word",
		in:   head + "source: {http: {url: \"https://licsrv.example.com/seats\"}}\nfeatures:\n- name: MATLAB\n  seats: 0\n  env: {MATLAB_PREFDIR: \"off\"}\n",
		want: func(c *Configuration) {
			c.Source = Source{HTTP: &HTTPSource{URL: "https://licsrv.example.com/seats", Timeout: metav1.Duration{Duration: DefaultTimeout}}}
			c.Features[0].Seats = ptr.To[int32](0)
			c.Features[0].Env = map[string]string{"MATLAB_PREFDIR": "off"}
		},
	}, {
		name: "underscores make dashes",
		in:   head + "source: {lmstat: {command: [lmutil, lmstat, -a], timeout: 30s}}\nfeatures:\n- name: Signal_Toolbox\n",
		want: func(c *Configuration) {
			c.Source = Source{LMStat: &LMStatSource{Command: []string{"lmutil", "lmstat", "-a"}, Timeout: metav1.Duration{Duration: 30 * time.Second}}}
			c.Features[0] = Feature{Name: "Signal_Toolbox", Pool: "signal-toolbox", ResourceName: "licenses.adminsched.io/signal-toolbox", DeviceClassName: "signal-toolbox.licenses.adminsched.io"}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			want := &Configuration{
				TypeMeta:     metav1.TypeMeta{APIVersion: APIVersion, Kind: Kind},
				Features:     []Feature{{Name: "MATLAB", Pool: "matlab", ResourceName: "licenses.adminsched.io/matlab", DeviceClassName: "matlab.licenses.adminsched.io", Seats: ptr.To[int32](10)}},
				PollInterval: metav1.Duration{Duration: DefaultPollInterval},
				SettleWindow: &metav1.Duration{Duration: DefaultSettleWindow},
				StaleAfter:   metav1.Duration{Duration: DefaultStaleAfter},
				OnStale:      FailClosed,
				Devices:      PerSeat,
				MaxSeats:     DefaultMaxSeats,
			}
			tc.want(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("configuration (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeTooManyFeatures(t *testing.T) {
	var b strings.Builder
	b.WriteString(head + "source: {static: {}}\nfeatures:\n")
	for i := range MaxFeatures + 1 {
		fmt.Fprintf(&b, "- {name: f%d, seats: 1}\n", i)
	}
	_, err := Decode([]byte(b.String()))
	if diff := cmp.Diff("features: Too many: 1001: must have at most 1000 items", errString(err)); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}

// FuzzDecode checks that Decode never panics and that what it accepts is
// valid and already defaulted: validating and defaulting it again changes
// nothing.
func FuzzDecode(f *testing.F) {
	example, err := os.ReadFile(filepath.Join("testdata", "example.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example)
	f.Add([]byte(static("  env: {A: \"on\"}\n", "settleWindow: 0s\n")))
	f.Add([]byte(head + "source: {http: {url: \"https://licsrv/seats\"}}\nfeatures:\n- name: a_b\n- name: A-B\n  pool: x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Decode(data)
		if err != nil {
			return
		}
		if errs := Validate(c); len(errs) > 0 {
			t.Fatalf("accepted, then invalid: %v", errs.ToAggregate())
		}
		again, err := Decode(data)
		if err != nil {
			t.Fatalf("second decode: %v", err)
		}
		SetDefaults(again)
		if diff := cmp.Diff(c, again); diff != "" {
			t.Errorf("defaulting twice changes it (-once +twice):\n%s", diff)
		}
	})
}

// TestSettleWindowZero: 0s turns the settle window off; left out, it is the
// default.
func TestSettleWindowZero(t *testing.T) {
	for doc, want := range map[string]time.Duration{
		"settleWindow: 0s\n": 0,
		"":                   DefaultSettleWindow,
	} {
		c, err := Decode([]byte("apiVersion: licenses.adminsched.io/v1alpha1\nkind: LicenseDriverConfiguration\nsource: {static: {}}\nfeatures: [{name: MATLAB, seats: 1}]\n" + doc))
		if err != nil {
			t.Fatal(err)
		}
		if c.SettleWindow.Duration != want {
			t.Errorf("%q: settle window %s, want %s", doc, c.SettleWindow.Duration, want)
		}
	}
}

// testCA is a self-signed certificate made for this test (openssl req -x509).
const testCA = `-----BEGIN CERTIFICATE-----
MIIBmjCCAT+gAwIBAgIUIzZWy0mW09wceNO7e3tPa5/asGcwCgYIKoZIzj0EAwIw
ITEfMB0GA1UEAwwWbGljZW5zZSBzZXJ2ZXIgdGVzdCBDQTAgFw0yNjEyMDUwMDU2
MTJaGA8yMTI2MTExMTAwNTYxMlowITEfMB0GA1UEAwwWbGljZW5zZSBzZXJ2ZXIg
dGVzdCBDQTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABG3IXTdRTpDEwrvV5Ohh
OUyLQERg2s0tPz147HzJz6Fo8K2DnsLW1xUFGcKoFWiTxdqjeiJjy69jfSMWU7uz
POyjUzBRMB0GA1UdDgQWBBTF6sCb1Rk4J8UG9sFZnjrLwx6ZLTAfBgNVHSMEGDAW
gBTF6sCb1Rk4J8UG9sFZnjrLwx6ZLTAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49
BAMCA0kAMEYCIQC4M5bBQQQ7n4W5bHAsAH6n5nbxgWEkvsxQ+tYI2itiWAIhAJlu
Bm3jPf4yiEkKIR3gkaVKFxmd1QepTj4YJQnboski
-----END CERTIFICATE-----
`

func TestDecodeHTTPCAFile(t *testing.T) {
	dir := t.TempDir()
	ca, notCA, missing := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "key.pem"), filepath.Join(dir, "missing.pem")
	for path, data := range map[string]string{ca: testCA, notCA: "-----BEGIN PRIVATE KEY-----\nAQ==\n-----END PRIVATE KEY-----\n"} {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	in := func(url, caFile string) string {
		return head + fmt.Sprintf("source: {http: {url: %q, caFile: %q}}\nfeatures:\n- name: MATLAB\n", url, caFile)
	}
	for _, tc := range []struct {
		name, in, wantErr string
	}{{
		name: "a bundle of one certificate",
		in:   in("https://licsrv/seats", ca),
	}, {
		name:    "with an http url",
		in:      in("http://licsrv/seats", ca),
		wantErr: fmt.Sprintf("source.http.caFile: Invalid value: %q: only valid with an https url", ca),
	}, {
		name:    "a file that is not there",
		in:      in("https://licsrv/seats", missing),
		wantErr: fmt.Sprintf("source.http.caFile: Invalid value: %q: must be a readable PEM file: open %s: no such file or directory", missing, missing),
	}, {
		name:    "a file without a certificate",
		in:      in("https://licsrv/seats", notCA),
		wantErr: fmt.Sprintf("source.http.caFile: Invalid value: %q: must hold at least one PEM certificate, it holds none", notCA),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Decode([]byte(tc.in))
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if err == nil && c.Source.HTTP.CAFile != ca {
				t.Errorf("caFile %q, want %q", c.Source.HTTP.CAFile, ca)
			}
		})
	}
}
