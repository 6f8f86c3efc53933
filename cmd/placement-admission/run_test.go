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
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	admissionv1beta1 "k8s.io/api/admissionregistration/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/adminsched/scheduler-plugins/pkg/admissionpolicy"
	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.yaml from this run")

// TestShippedConfigs renders every PlacementPolicy config the repo ships and
// compares with the reviewed output in testdata (go test -update rewrites
// it), and checks that each document decodes strictly as the admission
// API's types, at the version the build's own minor serves. The golden
// files are the v1 output of 1.36 and later; a 1.35 build renders the same
// documents as v1beta1, with a header line.
func TestShippedConfigs(t *testing.T) {
	configs, err := filepath.Glob("../../manifests/placementpolicy/*-config.yaml")
	if err != nil || len(configs) == 0 {
		t.Fatalf("no shipped config found: %v", err)
	}
	served, err := admissionpolicy.ParseKubeVersion(kubeversion.String())
	if err != nil {
		t.Fatal(err)
	}
	if *update && served.Version != "v1" {
		t.Fatalf("-update: the golden files hold v1; run it on a build of 1.36 or later, not %s", kubeversion.String())
	}
	scheme := runtime.NewScheme()
	if err := admissionv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := admissionv1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	decoder := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
	for _, path := range configs {
		name := strings.TrimSuffix(filepath.Base(path), ".yaml")
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run([]string{"--config", path}, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			golden := filepath.Join("testdata", name+".golden.yaml")
			if *update {
				if err := os.WriteFile(golden, stdout.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to write it)", err)
			}
			got := stdout.String()
			if served.Enable != "" {
				header := fmt.Sprintf("# For Kubernetes 1.%d, which serves them as %s with ", served.Minor, served.Version)
				if !strings.Contains(got, header) {
					t.Errorf("no header line %q in:\n%s", header, got)
				}
				got = stripLine(got, header)
			}
			if diff := cmp.Diff(atVersion(string(want), served.Version), got); diff != "" {
				t.Errorf("output differs from %s (-want +got):\n%s", golden, diff)
			}
			reader := utilyaml.NewYAMLReader(bufioReader(stdout.Bytes()))
			kinds := map[string]int{}
			for {
				doc, err := reader.Read()
				if err != nil {
					break
				}
				if len(bytes.TrimSpace(stripComments(doc))) == 0 {
					continue
				}
				_, gvk, err := decoder.Decode(doc, nil, nil)
				if err != nil || gvk.Version != served.Version {
					t.Fatalf("decoding a rendered document strictly as %s: %v, %v\n%s", served.Version, gvk, err, doc)
				}
				kinds[gvk.Kind]++
			}
			if kinds["MutatingAdmissionPolicy"] == 0 || kinds["MutatingAdmissionPolicy"] != kinds["MutatingAdmissionPolicyBinding"] {
				t.Errorf("rendered %v: want as many bindings as policies, and at least one", kinds)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unknownField := write("unknown.yaml", `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: s
  plugins: {multiPoint: {enabled: [{name: PlacementPolicy}]}}
  pluginConfig:
  - name: PlacementPolicy
    args:
      rules:
      - {name: eu, namespaces: [payments], action: Require, nodeSelectr: {matchLabels: {a: b}}}
`)
	badWeight := write("weight.yaml", `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: s
  plugins: {multiPoint: {enabled: [{name: PlacementPolicy}]}}
  pluginConfig:
  - name: PlacementPolicy
    args:
      rules:
      - {name: eu, namespaces: [payments], action: Prefer, weight: 500, nodeSelector: {matchLabels: {a: b}}}
`)
	noPlugin := write("none.yaml", `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: s
`)
	misspelt := write("misspelt.yaml", `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: s
  plugins: {multiPoint: {enabled: [{name: PlacementPolicy}]}}
  pluginConfig:
  - name: PlacementPolicyy
    args:
      rules:
      - {name: eu, namespaces: [payments], action: Require, nodeSelector: {matchLabels: {a: b}}}
`)
	notEnabled := write("not-enabled.yaml", `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: s
  pluginConfig:
  - name: PlacementPolicy
    args:
      rules:
      - {name: eu, namespaces: [payments], action: Require, nodeSelector: {matchLabels: {a: b}}}
`)
	huge := write("huge.yaml", strings.Repeat("#", 2<<20))
	for _, tt := range []struct {
		name       string
		args       []string
		code       int
		wantStderr string
		wantStdout string
	}{
		{"no config", nil, 1, "--config is required", ""},
		{"missing file", []string{"--config", filepath.Join(dir, "nope.yaml")}, 1, "no such file or directory", ""},
		{"unknown field, named", []string{"--config", unknownField}, 1, `unknown field "rules[0].nodeSelectr"`, ""},
		{"weight out of range, named with its path", []string{"--config", badWeight}, 1, "profiles[0].pluginConfig[0].args.rules[0].weight", ""},
		{"file too large", []string{"--config", huge}, 1, "scheduler config", ""},
		{"a misspelt pluginConfig name, named with the one meant", []string{"--config", misspelt}, 1, `profiles[0].pluginConfig[0].name: Invalid value: "PlacementPolicyy": no such plugin; did you mean "PlacementPolicy"?`, ""},
		{"args for a plugin the profile does not enable", []string{"--config", notEnabled}, 1, `profiles[0].pluginConfig[0].name: Invalid value: "PlacementPolicy": the profile does not enable this plugin at any extension point`, ""},
		{"bad failure policy", []string{"--config", noPlugin, "--failure-policy", "Never"}, 1, `--failure-policy "Never": must be Ignore or Fail`, ""},
		{"arguments refused", []string{"--config", noPlugin, "extra"}, 1, `unknown command "extra"`, ""},
		{"no profile runs the plugin", []string{"--config", noPlugin}, 0, "no profile of", "# No rule to render."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit code %d, want %d (stderr: %s)", code, tt.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr %q does not contain %q", stderr.String(), tt.wantStderr)
			}
			if !strings.Contains(stdout.String(), tt.wantStdout) {
				t.Errorf("stdout %q does not contain %q", stdout.String(), tt.wantStdout)
			}
			if tt.code != 0 && stdout.Len() > 0 {
				t.Errorf("a failed run wrote to stdout: %q", stdout.String())
			}
		})
	}
}

func TestOutputFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "policies.yaml")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--config", "../../manifests/placementpolicy/data-residency-config.yaml", "--output-file", out, "--failure-policy", "Fail"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout %q, want nothing with --output-file", stdout.String())
	}
	if got := strings.Count(string(data), "failurePolicy: Fail"); got != 2 {
		t.Errorf("%d policies with failurePolicy: Fail, want 2:\n%s", got, data)
	}
}

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }

// stripComments drops the comment lines of a YAML document.
func stripComments(doc []byte) []byte {
	var out []byte
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out = append(out, line...)
			out = append(out, '\n')
		}
	}
	return out
}

// TestReadmeExcerpt checks that the excerpt of output pkg/placementpolicy's
// README quotes is this command's output: each of its lines is a line of the
// rendered file, in the same order.
func TestReadmeExcerpt(t *testing.T) {
	const start = "# bin/placement-admission --config manifests/placementpolicy/data-residency-config.yaml\n"
	readme, err := os.ReadFile("../../pkg/placementpolicy/README.md")
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(readme, []byte(start))
	if i < 0 {
		t.Fatalf("the README has no block starting %q", start)
	}
	block := readme[i+len(start):]
	block = block[:bytes.Index(block, []byte("```"))]
	args := []string{"--config", "../../manifests/placementpolicy/data-residency-config.yaml"}
	if !kubeversion.Has(kubeversion.MutatingAdmissionPolicyV1) {
		// The README quotes the v1 output of builds of 1.36 and later,
		// which an older build renders for 1.36.
		args = append(args, "--kube-version", "1.36")
	}
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	out := strings.Split(stdout.String(), "\n")
	at := 0
	for _, line := range strings.Split(strings.TrimSpace(string(block)), "\n") {
		if strings.TrimSpace(line) == "# ..." {
			continue // the README's mark of lines left out
		}
		j := slices.Index(out[at:], line)
		if j < 0 {
			t.Fatalf("README line %q is not in the output after line %d:\n%s", line, at, stdout.String())
		}
		at += j + 1
	}
}

// TestKubeVersion renders the shipped data-residency config for each
// minor: 1.36 and later get v1; 1.35 gets the same documents as v1beta1,
// each decoding strictly as v1beta1's types, with a header line saying what
// to switch on; the default is the build's own minor; other versions are
// refused.
func TestKubeVersion(t *testing.T) {
	const config = "../../manifests/placementpolicy/data-residency-config.yaml"
	render := func(t *testing.T, args ...string) (string, string, int) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"--config", config}, args...), &stdout, &stderr)
		return stdout.String(), stderr.String(), code
	}
	// Every build renders for 1.36: its own minor, or one newer.
	v1, stderr, code := render(t, "--kube-version", "1.36")
	if code != 0 {
		t.Fatalf("--kube-version 1.36: exit %d: %s", code, stderr)
	}
	v1beta1, stderr, code := render(t, "--kube-version", "1.35")
	if code != 0 {
		t.Fatalf("--kube-version 1.35: exit %d: %s", code, stderr)
	}
	n := kubeversion.Minor
	for _, v := range []struct {
		version string
		minor   int
	}{
		{"", n}, {fmt.Sprintf("v1.%d", n), n}, {fmt.Sprintf("v1.%d.2", n), n}, {fmt.Sprintf("1.%d", n+1), n + 1},
	} {
		var args []string
		if v.version != "" {
			args = []string{"--kube-version", v.version}
		}
		want := v1
		if v.minor < 36 {
			want = v1beta1
		}
		if out, stderr, code := render(t, args...); code != 0 || out != want {
			t.Errorf("--kube-version %q: exit %d (%s), output differs from 1.%d's: %v", v.version, code, stderr, v.minor, out != want)
		}
	}

	header := "# For Kubernetes 1.35, which serves them as v1beta1 with the feature gate MutatingAdmissionPolicy=true"
	if !strings.Contains(v1beta1, header) {
		t.Errorf("--kube-version 1.35: no header line %q in:\n%s", header, v1beta1)
	}
	if diff := cmp.Diff(atVersion(v1, "v1beta1"), stripLine(v1beta1, header)); diff != "" {
		t.Errorf("--kube-version 1.35: documents differ from 1.36's in more than apiVersion (-want +got):\n%s", diff)
	}
	scheme := runtime.NewScheme()
	if err := admissionv1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	decoder := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
	reader := utilyaml.NewYAMLReader(bufioReader([]byte(v1beta1)))
	docs := 0
	for {
		doc, err := reader.Read()
		if err != nil {
			break
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		if _, gvk, err := decoder.Decode(doc, nil, nil); err != nil || gvk.Version != "v1beta1" {
			t.Fatalf("a 1.35 document does not decode strictly as v1beta1 (%v, %v):\n%s", gvk, err, doc)
		}
		docs++
	}
	if docs == 0 {
		t.Error("--kube-version 1.35 rendered no document")
	}

	tooNew := fmt.Sprintf("1.%d", n+2)
	for v, want := range map[string]string{
		"1.34":   fmt.Sprintf(`--kube-version "1.34": Kubernetes 1.34: renders for 1.35 to 1.%d`, n+1),
		tooNew:   fmt.Sprintf(`--kube-version %q: Kubernetes %s: renders for 1.35 to 1.%d`, tooNew, tooNew, n+1),
		"latest": `--kube-version "latest": want a Kubernetes version such as 1.36 or v1.36.3`,
		"1.36.x": `--kube-version "1.36.x": want a Kubernetes version`,
	} {
		if _, stderr, code := render(t, "--kube-version", v); code == 0 || !strings.Contains(stderr, want) {
			t.Errorf("--kube-version %s: exit %d, stderr %q, want an error containing %q", v, code, stderr, want)
		}
	}
}

// atVersion is the v1 output out with its documents at version instead.
func atVersion(out, version string) string {
	return strings.ReplaceAll(out, "apiVersion: admissionregistration.k8s.io/v1\n", "apiVersion: admissionregistration.k8s.io/"+version+"\n")
}

// stripLine returns s without the line that starts with prefix.
func stripLine(s, prefix string) string {
	var out []string
	for _, line := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(line, prefix) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "")
}
