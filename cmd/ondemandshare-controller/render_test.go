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

package main

import (
	"bufio"
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	admissionv1beta1 "k8s.io/api/admissionregistration/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.yaml from this run")

const testConfig = "testdata/scheduler-config.yaml"

func render(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(append([]string{"render"}, args...), &out, &errOut)
	return out.String(), errOut.String(), code
}

// decodeAll decodes every document of a rendered stream strictly as the
// admission API's types and counts them by version/kind.
func decodeAll(t *testing.T, stream string) map[string]int {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := admissionv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := admissionv1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	decoder := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(stream)))
	kinds := map[string]int{}
	for {
		doc, err := reader.Read()
		if err != nil {
			break
		}
		var body []string
		for _, line := range strings.Split(string(doc), "\n") {
			if !strings.HasPrefix(line, "#") {
				body = append(body, line)
			}
		}
		if strings.TrimSpace(strings.Join(body, "")) == "" {
			continue
		}
		_, gvk, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("decoding a rendered document strictly: %v\n%s", err, doc)
		}
		kinds[gvk.Version+"/"+gvk.Kind]++
	}
	return kinds
}

// TestRenderGolden renders a config of two profiles, two policies (one in
// both profiles) and excluded namespaces for 1.36, which every build can,
// and compares with the reviewed output (go test -update rewrites it),
// which decodes strictly as v1.
func TestRenderGolden(t *testing.T) {
	stdout, stderr, code := render(t, "--config", testConfig, "--kube-version", "1.36")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	golden := filepath.Join("testdata", "scheduler-config.golden.yaml")
	if *update {
		if err := os.WriteFile(golden, []byte(stdout), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if diff := cmp.Diff(string(want), stdout); diff != "" {
		t.Errorf("output differs from %s (-want +got):\n%s", golden, diff)
	}
	// A build of 1.35 has no v1 types to decode them with (TestRenderKubeVersion
	// decodes its v1beta1).
	if kubeversion.Has(kubeversion.MutatingAdmissionPolicyV1) {
		if got, want := decodeAll(t, stdout), map[string]int{"v1/MutatingAdmissionPolicy": 2, "v1/MutatingAdmissionPolicyBinding": 2}; !cmp.Equal(got, want) {
			t.Errorf("rendered %v, want %v", got, want)
		}
	}
}

// TestRenderKubeVersion: 1.35 gets the same documents as v1beta1 with a
// header line saying what to switch on; the default is the build's minor.
func TestRenderKubeVersion(t *testing.T) {
	v1, stderr, code := render(t, "--config", testConfig, "--kube-version", "1.36")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	v1beta1, stderr, code := render(t, "--config", testConfig, "--kube-version", "v1.35.4")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	const header = "# For Kubernetes 1.35, which serves them as v1beta1 with the feature gate MutatingAdmissionPolicy=true"
	if !strings.Contains(v1beta1, header) {
		t.Errorf("no header line %q in:\n%s", header, v1beta1)
	}
	if got, want := decodeAll(t, v1beta1), map[string]int{"v1beta1/MutatingAdmissionPolicy": 2, "v1beta1/MutatingAdmissionPolicyBinding": 2}; !cmp.Equal(got, want) {
		t.Errorf("rendered for 1.35: %v, want %v", got, want)
	}
	var kept []string
	for _, line := range strings.SplitAfter(v1beta1, "\n") {
		if !strings.HasPrefix(line, header) {
			kept = append(kept, line)
		}
	}
	if diff := cmp.Diff(strings.ReplaceAll(v1, "admissionregistration.k8s.io/v1\n", "admissionregistration.k8s.io/v1beta1\n"), strings.Join(kept, "")); diff != "" {
		t.Errorf("1.35's output is not 1.36's as v1beta1 (-want +got):\n%s", diff)
	}
	byDefault, stderr, code := render(t, "--config", testConfig)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := v1
	if !kubeversion.Has(kubeversion.MutatingAdmissionPolicyV1) {
		want = v1beta1
	}
	if byDefault != want {
		t.Errorf("without --kube-version, a build of %s rendered:\n%s", kubeversion.String(), byDefault)
	}
}

func TestRenderBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const head = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: s\n"
	noArgs := write("none.yaml", head)
	unknownField := write("unknown.yaml", head+`  pluginConfig:
  - name: OnDemandShare
    args:
      policies:
      - {name: web, namespaces: [shop], minOnDemandCount: 1, workloadSelectr: {}}
`)
	misspelt := write("misspelt.yaml", head+`  pluginConfig:
  - name: OnDemandShar
    args: {}
`)
	tooMuch := write("percent.yaml", head+`  pluginConfig:
  - name: OnDemandShare
    args:
      policies:
      - {name: web, namespaces: [shop], minOnDemandPercent: 130}
`)
	for _, tt := range []struct {
		name       string
		args       []string
		code       int
		wantStderr string
		wantStdout string
	}{
		{"no config", nil, 1, "--config is required: the KubeSchedulerConfiguration file whose OnDemandShare policies to render", ""},
		{"unknown failure policy, with the allowed values", []string{"--config", noArgs, "--failure-policy", "Never"}, 1, `--failure-policy "Never": must be Ignore or Fail`, ""},
		{"failure policy is case sensitive", []string{"--config", noArgs, "--failure-policy", "ignore"}, 1, `--failure-policy "ignore": must be Ignore or Fail`, ""},
		{"kube version too old", []string{"--config", noArgs, "--kube-version", "1.34"}, 1, `--kube-version "1.34": Kubernetes 1.34: renders for 1.35 to`, ""},
		{"kube version too new", []string{"--config", noArgs, "--kube-version", "1.99"}, 1, `--kube-version "1.99": Kubernetes 1.99: renders for 1.35 to`, ""},
		{"kube version not a version", []string{"--config", noArgs, "--kube-version", "latest"}, 1, `--kube-version "latest": want a Kubernetes version such as 1.36 or v1.36.3`, ""},
		{"missing file", []string{"--config", filepath.Join(dir, "nope.yaml")}, 1, "no such file or directory", ""},
		{"unknown field, named", []string{"--config", unknownField}, 1, `unknown field "policies[0].workloadSelectr"`, ""},
		{"a misspelt plugin name, with the one meant", []string{"--config", misspelt}, 1, `profiles[0].pluginConfig[0].name: Invalid value: "OnDemandShar": no such plugin; did you mean "OnDemandShare"?`, ""},
		{"invalid args, named with their path", []string{"--config", tooMuch}, 1, "profiles[0].pluginConfig[0].args.policies[0].minOnDemandPercent", ""},
		{"arguments refused", []string{"--config", noArgs, "extra"}, 1, `unknown command "extra" for "ondemandshare-controller render"`, ""},
		{"no profile holds the args", []string{"--config", noArgs}, 0, "no profile of", "# No policy to render."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := render(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d (stderr: %s)", code, tt.code, stderr)
			}
			if !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr %q does not contain %q", stderr, tt.wantStderr)
			}
			if !strings.Contains(stdout, tt.wantStdout) {
				t.Errorf("stdout %q does not contain %q", stdout, tt.wantStdout)
			}
			if tt.code != 0 && stdout != "" {
				t.Errorf("a failed run wrote to stdout: %q", stdout)
			}
		})
	}
	// A misspelt name's args are unread too: the name is refused once.
	if _, stderr, _ := render(t, "--config", misspelt); strings.Count(stderr, `"OnDemandShar"`) != 1 {
		t.Errorf("the misspelt name is refused %d times, want once: %s", strings.Count(stderr, `"OnDemandShar"`), stderr)
	}
}

func TestRenderOutputFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "policies.yaml")
	stdout, stderr, code := render(t, "--config", testConfig, "--output-file", out, "--failure-policy", "Fail")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if stdout != "" {
		t.Errorf("stdout %q, want nothing with --output-file", stdout)
	}
	if got := strings.Count(string(data), "failurePolicy: Fail"); got != 2 {
		t.Errorf("%d policies with failurePolicy: Fail, want 2:\n%s", got, data)
	}
}
