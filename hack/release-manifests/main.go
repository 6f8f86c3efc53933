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

// Command release-manifests renders the install kustomization into one YAML
// file for `kubectl apply -f`, with the scheduler image set to a release's
// reference. `make release-manifests` runs it:
//
//	go run ./hack/release-manifests --image adminsched/kube-scheduler:v0.37.0 \
//	  --output _output/release/all-in-one.yaml
//
// It builds, in memory, an overlay of the kustomization whose only change is
// kustomize's `images:` transformer, so the result is what
// `kustomize edit set image` followed by `kustomize build` would give, without
// a kustomize binary and without touching the checkout.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/pkg/util"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// defaultImageName is the image the install kustomization's Deployment names.
const defaultImageName = "adminsched/kube-scheduler"

func main() {
	var (
		dir       = flag.String("kustomization", "manifests/install", "directory of the kustomization to render")
		image     = flag.String("image", "", "image reference for the scheduler, name:tag or name@digest (required)")
		imageName = flag.String("image-name", defaultImageName, "image name in the kustomization that --image replaces")
		output    = flag.String("output", "", "file to write (its directory is created); standard output when empty")
	)
	flag.Parse()
	if *image == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: release-manifests --image <name>:<tag> [--kustomization dir] [--output file]")
		os.Exit(2)
	}
	out, n, err := render(*dir, *imageName, *image)
	if err != nil {
		fmt.Fprintln(os.Stderr, "release-manifests:", err)
		os.Exit(1)
	}
	if *output == "" {
		_, err = os.Stdout.Write(out)
	} else {
		if err = os.MkdirAll(filepath.Dir(*output), 0o755); err == nil {
			err = os.WriteFile(*output, out, 0o644)
		}
		if err == nil {
			fmt.Fprintf(os.Stderr, "wrote %s: %d objects, image %s\n", *output, n, *image)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "release-manifests:", err)
		os.Exit(1)
	}
}

// render builds the kustomization in dir with every container image named
// imageName set to image, and returns the objects as one multi-document YAML
// file and their count. It fails when no container, or a container of another
// reference to imageName, is left after the build.
func render(dir, imageName, image string) ([]byte, int, error) {
	name, tag, digest := util.SplitImageName(image)
	if name == "" || (tag == "" && digest == "") {
		return nil, 0, fmt.Errorf("--image %q: want <name>:<tag> or <name>@<digest>", image)
	}

	mem := filesys.MakeFsInMemory()
	if err := copyTree(os.DirFS(dir), mem, "/base"); err != nil {
		return nil, 0, fmt.Errorf("reading %s: %w", dir, err)
	}
	overlay, err := yaml.Marshal(types.Kustomization{
		TypeMeta:  types.TypeMeta{APIVersion: types.KustomizationVersion, Kind: types.KustomizationKind},
		Resources: []string{"../base"},
		Images:    []types.Image{{Name: imageName, NewName: name, NewTag: tag, Digest: digest}},
	})
	if err != nil {
		return nil, 0, err
	}
	if err := mem.WriteFile("/release/kustomization.yaml", overlay); err != nil {
		return nil, 0, err
	}

	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(mem, "/release")
	if err != nil {
		return nil, 0, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	if err := checkImages(resMap, image); err != nil {
		return nil, 0, err
	}
	body, err := resMap.AsYaml()
	if err != nil {
		return nil, 0, err
	}
	header := fmt.Sprintf("# adminsched kube-scheduler %s, rendered from %s by `make release-manifests`.\n"+
		"# kubectl apply -f all-in-one.yaml\n", image, filepath.ToSlash(dir))
	return append([]byte(header), body...), resMap.Size(), nil
}

// checkImages fails unless every container of every workload runs image, so
// that a kustomization renamed by hand (kustomize edit set image) is not
// released with a reference --image did not replace.
func checkImages(m resmap.ResMap, image string) error {
	found := 0
	for _, r := range m.Resources() {
		obj, err := r.Map()
		if err != nil {
			return err
		}
		for _, field := range []string{"containers", "initContainers"} {
			containers, _ := nested(obj, "spec", "template", "spec", field).([]any)
			for _, c := range containers {
				got, _ := c.(map[string]any)["image"].(string)
				if got != image {
					return fmt.Errorf("%s %s: container image %q, want %q (is --image-name the name in the kustomization?)",
						r.GetKind(), r.GetName(), got, image)
				}
				found++
			}
		}
	}
	if found == 0 {
		return errors.New("no workload with a container in the kustomization")
	}
	return nil
}

func nested(obj map[string]any, fields ...string) any {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[f]
	}
	return cur
}

// copyTree copies every file of src into dst under root.
func copyTree(src fs.FS, dst filesys.FileSystem, root string) error {
	return fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := path.Join(root, p)
		if d.IsDir() {
			return dst.MkdirAll(target)
		}
		data, err := fs.ReadFile(src, p)
		if err != nil {
			return err
		}
		return dst.WriteFile(target, data)
	})
}
