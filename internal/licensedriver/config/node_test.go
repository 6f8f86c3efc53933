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
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// nodeFile is the kubelet plugin's configuration: features only.
const nodeFile = head + `features:
- name: MATLAB
  env: {LM_LICENSE_FILE: 27000@licsrv.example.com}
- name: Ansys_CFD
  pool: ansys
`

func TestLoadNode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(nodeFile), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := LoadNode(path)
	if err != nil {
		t.Fatal(err)
	}
	want := &Configuration{
		TypeMeta: metav1.TypeMeta{APIVersion: APIVersion, Kind: Kind},
		Features: []Feature{{
			Name:            "MATLAB",
			Pool:            "matlab",
			ResourceName:    "licenses.adminsched.io/matlab",
			DeviceClassName: "matlab.licenses.adminsched.io",
			Env:             map[string]string{"LM_LICENSE_FILE": "27000@licsrv.example.com"},
		}, {
			Name:            "Ansys_CFD",
			Pool:            "ansys",
			ResourceName:    "licenses.adminsched.io/ansys",
			DeviceClassName: "ansys.licenses.adminsched.io",
		}},
		PollInterval: metav1.Duration{Duration: DefaultPollInterval},
		SettleWindow: &metav1.Duration{Duration: DefaultSettleWindow},
		StaleAfter:   metav1.Duration{Duration: DefaultStaleAfter},
		OnStale:      FailClosed,
		Devices:      PerSeat,
		MaxSeats:     DefaultMaxSeats,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("LoadNode (-want +got):\n%s", diff)
	}
	// The controller's loader refuses it: it has no source.
	if _, err := Load(path); err == nil {
		t.Error("Load accepted a configuration without a source")
	}

	// The controller's own file works for the kubelet plugin too.
	if _, err := LoadNode(filepath.Join("testdata", "example.yaml")); err != nil {
		t.Errorf("LoadNode of the controller's example: %v", err)
	}
	missing := filepath.Join(t.TempDir(), "none.yaml")
	if _, err := LoadNode(missing); err == nil || err.Error() != "open "+missing+": no such file or directory" {
		t.Errorf("LoadNode of a missing file: %v", err)
	}
}

func TestDecodeNodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		wantErr string
	}{{
		name:    "features only",
		in:      nodeFile,
		wantErr: "",
	}, {
		name:    "the controller's file, with seats and a static source",
		in:      static("", ""),
		wantErr: "",
	}, {
		name:    "seats without a source",
		in:      head + "features:\n- name: MATLAB\n  seats: 10\n",
		wantErr: "",
	}, {
		name:    "unknown field, with its path",
		in:      nodeFile + "  seat: 3\n",
		wantErr: `unknown field "features[1].seat"`,
	}, {
		name:    "unknown top-level field",
		in:      nodeFile + "sources: {static: {}}\n",
		wantErr: `unknown field "sources"`,
	}, {
		name:    "duplicate field",
		in:      nodeFile + "  pool: ansys2\n",
		wantErr: `yaml: unmarshal errors:` + "\n" + `  line 8: key "pool" already set in map`,
	}, {
		name:    "two documents",
		in:      nodeFile + "---\n" + nodeFile,
		wantErr: "the file holds 2 YAML documents; the configuration is one",
	}, {
		name:    "YAML 1.1 word as an env value",
		in:      head + "features:\n- name: MATLAB\n  env: {LM_LICENSE_FILE: on}\n",
		wantErr: `features[0].env.LM_LICENSE_FILE: Invalid value: "on": this unquoted value is a YAML 1.1 boolean (true) to the decoder; quote it ("on") if a string is meant, or write true if a boolean is`,
	}, {
		name:    "wrong apiVersion and kind",
		in:      "apiVersion: licenses.adminsched.io/v1\nkind: Other\nfeatures:\n- name: MATLAB\n",
		wantErr: `[apiVersion: Unsupported value: "licenses.adminsched.io/v1": supported values: "licenses.adminsched.io/v1alpha1", kind: Unsupported value: "Other": supported values: "LicenseDriverConfiguration"]`,
	}, {
		name:    "no features",
		in:      head + "features: []\n",
		wantErr: "features: Required value: at least one license feature",
	}, {
		name:    "a feature without a name",
		in:      head + "features:\n- pool: p\n",
		wantErr: `features[0].name: Required value: the feature's name on the license server`,
	}, {
		name:    "duplicate pool",
		in:      nodeFile + "- name: Other\n  pool: ansys\n  deviceClassName: other.example.com\n  resourceName: example.com/other\n",
		wantErr: `features[2].pool: Duplicate value: "ansys"`,
	}, {
		name:    "bad pool",
		in:      head + "features:\n- name: MATLAB\n  pool: Matlab\n  resourceName: example.com/matlab\n  deviceClassName: matlab.example.com\n",
		wantErr: `features[0].pool: Invalid value: "Matlab": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*') (set pool when the feature's name does not make one)`,
	}, {
		name:    "a resource name in kubernetes.io",
		in:      head + "features:\n- name: MATLAB\n  resourceName: licenses.kubernetes.io/matlab\n",
		wantErr: `features[0].resourceName: Invalid value: "licenses.kubernetes.io/matlab": must be an extended resource name: <domain>/<name>, not in kubernetes.io`,
	}, {
		name:    "bad env name",
		in:      head + "features:\n- name: MATLAB\n  env: {LM-LICENSE-FILE: 27000@licsrv}\n",
		wantErr: `features[0].env[LM-LICENSE-FILE]: Invalid value: "LM-LICENSE-FILE": must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*)`,
	}, {
		name:    "negative seats",
		in:      head + "features:\n- name: MATLAB\n  seats: -1\n",
		wantErr: "features[0].seats: Invalid value: -1: must be between 0 and maxSeats (10000)",
	}, {
		// A source, when there is one, is checked as the controller's.
		name:    "the static source without seats",
		in:      nodeFile + "source: {static: {}}\n",
		wantErr: "[features[0].seats: Required value: the static source serves the seats configured here, features[1].seats: Required value: the static source serves the seats configured here]",
	}, {
		name:    "two sources",
		in:      nodeFile + "source: {lmstat: {command: [lmstat]}, http: {url: \"https://licsrv/seats\"}}\n",
		wantErr: "source: Invalid value: 2: exactly one of static, lmstat and http must be set",
	}, {
		name:    "a bad http URL",
		in:      nodeFile + "source: {http: {url: \"ftp://licsrv/seats\"}}\n",
		wantErr: `source.http.url: Invalid value: "ftp://licsrv/seats": must be an absolute http or https URL`,
	}, {
		name:    "an lmstat source without a command",
		in:      nodeFile + "source: {lmstat: {}}\n",
		wantErr: "source.lmstat.command: Required value: the lmstat command and its arguments, e.g. [lmutil, lmstat, -a, -c, 27000@licsrv]",
	}, {
		name:    "controller settings are still checked",
		in:      nodeFile + "pollInterval: 500ms\n",
		wantErr: `pollInterval: Invalid value: "500ms": must be between 1s and 24h`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeNode([]byte(tc.in))
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Errorf("DecodeNode error (-want +got):\n%s\nin:\n%s", diff, tc.in)
			}
		})
	}
}
