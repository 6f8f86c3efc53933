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
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
)

// examplesDir holds the files the README's "Try it on your machine" runs.
const examplesDir = "../../manifests/license-driver/examples"

// playgroundScheduler is the profile of the playground's built-in
// scheduler configuration, which the example pods name.
const playgroundScheduler = "custom-scheduler"

// TestExamples: the walkthrough's files are what it says: a configuration
// the controller accepts, more seats asked for than it offers (so that one
// pod waits), on the feature's resource and DeviceClass, by pods the
// playground's scheduler places.
func TestExamples(t *testing.T) {
	cfg, err := config.Load(filepath.Join(examplesDir, "static.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Features) != 1 || cfg.Source.Static == nil || cfg.Features[0].Seats == nil {
		t.Fatalf("static.yaml: want one feature with seats from the static source, got %+v", cfg)
	}
	feature := cfg.Features[0]

	var asked int64
	for _, pod := range decodeExamples[corev1.Pod](t, "pods.yaml") {
		checkScheduler(t, "pods.yaml", &pod)
		for _, c := range pod.Spec.Containers {
			for name, q := range c.Resources.Limits {
				if string(name) != feature.ResourceName {
					t.Errorf("pods.yaml: pod %s asks for %s, want %s", pod.Name, name, feature.ResourceName)
				}
				asked += q.Value()
			}
		}
	}
	if seats := int64(*feature.Seats); asked <= seats {
		t.Errorf("pods.yaml asks for %d seats of %d: none waits", asked, seats)
	}

	claim := readExample(t, "claim.yaml")
	var template resourceapi.ResourceClaimTemplate
	var pod corev1.Pod
	docs := splitDocuments(t, "claim.yaml", claim)
	if len(docs) != 2 {
		t.Fatalf("claim.yaml: %d documents, want a ResourceClaimTemplate and a Pod", len(docs))
	}
	unmarshalStrict(t, "claim.yaml", docs[0], &template)
	unmarshalStrict(t, "claim.yaml", docs[1], &pod)
	checkScheduler(t, "claim.yaml", &pod)
	if got := template.Spec.Spec.Devices.Requests[0].Exactly.DeviceClassName; got != feature.DeviceClassName {
		t.Errorf("claim.yaml asks for DeviceClass %s, want %s", got, feature.DeviceClassName)
	}
	if got := *pod.Spec.ResourceClaims[0].ResourceClaimTemplateName; got != template.Name {
		t.Errorf("claim.yaml's pod names template %s, want %s", got, template.Name)
	}
}

// TestReadmeShowsExamples: where the README shows an example file, it shows
// all of it (its header comment aside), so that the two do not drift.
func TestReadmeShowsExamples(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"static.yaml", "claim.yaml"} {
		body := withoutHeader(readExample(t, name))
		if !bytes.Contains(readme, []byte("```yaml\n"+body+"```\n")) {
			t.Errorf("README.md has no ```yaml block that is %s without its header comment:\n%s", name, body)
		}
		if !bytes.Contains(readme, []byte("manifests/license-driver/examples/"+name)) {
			t.Errorf("README.md does not name manifests/license-driver/examples/%s", name)
		}
	}
}

func checkScheduler(t *testing.T, file string, pod *corev1.Pod) {
	t.Helper()
	if pod.Spec.SchedulerName != playgroundScheduler {
		t.Errorf("%s: pod %s has schedulerName %q, want %q (the playground's)", file, pod.Name, pod.Spec.SchedulerName, playgroundScheduler)
	}
	profile := "schedulerName: " + playgroundScheduler
	data, err := os.ReadFile("../../manifests/nodelesspods/scheduler-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), profile) {
		t.Errorf("the playground's scheduler configuration has no %q", profile)
	}
}

func readExample(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(examplesDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func decodeExamples[T any](t *testing.T, name string) []T {
	t.Helper()
	var out []T
	for _, doc := range splitDocuments(t, name, readExample(t, name)) {
		var obj T
		unmarshalStrict(t, name, doc, &obj)
		out = append(out, obj)
	}
	if len(out) == 0 {
		t.Fatalf("%s holds no object", name)
	}
	return out
}

func splitDocuments(t *testing.T, name string, data []byte) [][]byte {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if strings.TrimSpace(withoutHeader(doc)) != "" {
			docs = append(docs, doc)
		}
	}
}

func unmarshalStrict(t *testing.T, name string, doc []byte, obj any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// withoutHeader is data without its leading comment lines.
func withoutHeader(data []byte) string {
	lines := strings.SplitAfter(string(data), "\n")
	for len(lines) > 0 && strings.HasPrefix(lines[0], "#") {
		lines = lines[1:]
	}
	return strings.Join(lines, "")
}
