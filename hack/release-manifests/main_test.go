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
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"
)

const installDir = "../../manifests/install"

// decodeAll splits a multi-document YAML file into objects, failing on a
// document that is not an object of a kind client-go knows or that has a
// field its Go type does not (what kubectl apply's server-side field
// validation would reject).
func decodeAll(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding document %d: %v", len(objs)+1, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		typed, err := scheme.Scheme.New(u.GroupVersionKind())
		if err != nil {
			t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, typed, true); err != nil {
			t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
		}
		objs = append(objs, u)
	}
	return objs
}

func key(u *unstructured.Unstructured) string { return u.GetKind() + "/" + u.GetName() }

// sourceObjects reads the kustomization's resource files themselves (not a
// kustomize build), so that an object the rendering drops is noticed.
func sourceObjects(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(installDir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k types.Kustomization
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range k.Resources {
		data, err := os.ReadFile(filepath.Join(installDir, r))
		if err != nil {
			t.Fatalf("resource %s: %v", r, err)
		}
		for _, u := range decodeAll(t, data) {
			keys = append(keys, key(u))
		}
	}
	if len(keys) == 0 {
		t.Fatal("no objects in the kustomization's resources")
	}
	return keys
}

func TestRender(t *testing.T) {
	const image = "registry.example.com:5000/team/kube-scheduler:v0.37.0"
	out, n, err := render(installDir, defaultImageName, image)
	if err != nil {
		t.Fatal(err)
	}
	objs := decodeAll(t, out)
	if len(objs) != n {
		t.Errorf("render reported %d objects, the file holds %d", n, len(objs))
	}

	var got []string
	for _, u := range objs {
		got = append(got, key(u))
	}
	want := sourceObjects(t)
	for _, k := range want {
		if !slices.Contains(got, k) {
			t.Errorf("%s of the kustomization is missing from the release file", k)
		}
	}
	if len(got) != len(want) {
		t.Errorf("release file holds %d objects, the kustomization's resources %d:\n got %v\nwant %v", len(got), len(want), got, want)
	}

	deployments := 0
	for _, u := range objs {
		if u.GetKind() != "Deployment" {
			continue
		}
		deployments++
		var d appsv1.Deployment
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &d); err != nil {
			t.Fatal(err)
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			if c.Image != image {
				t.Errorf("Deployment %s container %s: image %q, want %q", d.Name, c.Name, c.Image, image)
			}
		}
	}
	if deployments != 1 {
		t.Errorf("%d Deployments, want 1", deployments)
	}
	if strings.Contains(string(out), ":latest") {
		t.Error("the release file still names a :latest image")
	}
	// kubectl apply -f creates in file order: the namespace must come first.
	if objs[0].GetKind() != "Namespace" {
		t.Errorf("first object is %s, want the Namespace", key(objs[0]))
	}
}

func TestRenderDigest(t *testing.T) {
	const image = "adminsched/kube-scheduler@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	out, _, err := render(installDir, defaultImageName, image)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "image: "+image+"\n") {
		t.Errorf("release file does not name %s", image)
	}
}

func TestRenderErrors(t *testing.T) {
	for _, tc := range []struct {
		name, imageName, image, want string
	}{
		{name: "no tag", imageName: defaultImageName, image: "adminsched/kube-scheduler", want: "want <name>:<tag>"},
		{name: "image name not in the kustomization", imageName: "example.com/other", image: "adminsched/kube-scheduler:v0.37.0",
			want: `container image "adminsched/kube-scheduler:latest", want "adminsched/kube-scheduler:v0.37.0"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := render(installDir, tc.imageName, tc.image)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	if _, _, err := render("testdata/does-not-exist", defaultImageName, "a:b"); err == nil {
		t.Error("no error for a missing kustomization directory")
	}
}
