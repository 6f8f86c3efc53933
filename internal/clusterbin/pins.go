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

package clusterbin

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	goversion "go/version"

	"golang.org/x/mod/modfile"
)

// modules are the two module definitions the binaries are built in: the
// playground's own (etcd, kube-apiserver, kube-controller-manager) and
// KWOK's (a module of its own so that its Kubernetes dependencies never move
// ours, as hack/tools/kwok in the repository).
type modules struct {
	mainMod, mainSum, kwokMod, kwokSum []byte
}

// pins are the versions that name a cache directory.
type pins struct {
	kubernetes, etcd, kwok string
	// minGo is the newest go directive of the two modules: the oldest Go
	// toolchain that builds them.
	minGo string
}

func (m modules) pins() (pins, error) {
	var p pins
	var err error
	if p.kubernetes, err = moduleVersion(m.mainMod, "k8s.io/kubernetes"); err != nil {
		return p, fmt.Errorf("the playground's go.mod: %w", err)
	}
	if p.etcd, err = moduleVersion(m.mainMod, "go.etcd.io/etcd/server/v3"); err != nil {
		return p, fmt.Errorf("the playground's go.mod: %w", err)
	}
	if p.kwok, err = moduleVersion(m.kwokMod, "sigs.k8s.io/kwok"); err != nil {
		return p, fmt.Errorf("the playground's kwok.mod: %w", err)
	}
	p.minGo = newerGo(goDirective(m.mainMod), goDirective(m.kwokMod))
	return p, nil
}

// key names the cache directory of binaries built from m for goos/goarch:
// readable versions first, then a hash of everything the build reads (both
// go.mod/go.sum pairs, since any requirement can change what a binary
// links, and the build commands), so that a playground with other pins or
// another recipe never takes binaries it did not build. The Go version
// that built them is in the stamp, not the key: knowing the local one takes
// a go command, which a reuse must not need, and a Go update should not
// cost a 10-minute rebuild of sources that did not change.
func (m modules) key(goos, goarch string) (string, error) {
	p, err := m.pins()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, part := range [][]byte{m.mainMod, m.mainSum, m.kwokMod, m.kwokSum, []byte(goos + "/" + goarch)} {
		// The length keeps two different splits of the same bytes apart.
		fmt.Fprintf(h, "%d:", len(part))
		h.Write(part)
	}
	for _, t := range targets {
		fmt.Fprintf(h, "%q", t.buildArgs("OUT", p.kubernetes))
	}
	return fmt.Sprintf("%s-%s-kubernetes-%s-etcd-%s-kwok-%s-%s", goos, goarch, p.kubernetes, p.etcd, p.kwok,
		hex.EncodeToString(h.Sum(nil))[:12]), nil
}

// moduleVersion is the version of module path that a go.mod selects: its
// require line, or the version of a replace directive for it.
func moduleVersion(gomod []byte, path string) (string, error) {
	f, err := modfile.Parse("go.mod", gomod, nil)
	if err != nil {
		return "", err
	}
	version := ""
	for _, r := range f.Require {
		if r.Mod.Path == path {
			version = r.Mod.Version
		}
	}
	for _, r := range f.Replace {
		if r.Old.Path != path || (r.Old.Version != "" && r.Old.Version != version) {
			continue
		}
		if r.New.Version == "" {
			old := r.Old.Path
			if r.Old.Version != "" {
				old += " " + r.Old.Version
			}
			return "", fmt.Errorf("module %s is replaced by a directory (replace %s => %s): the playground cannot build it without a checkout", path, old, r.New.Path)
		}
		return r.New.Version, nil
	}
	if version == "" {
		return "", fmt.Errorf("no requirement on %s", path)
	}
	return version, nil
}

// goDirective is a go.mod's go version ("1.26.8"), or "" if it has none.
func goDirective(gomod []byte) string {
	f, err := modfile.Parse("go.mod", gomod, nil)
	if err != nil || f.Go == nil {
		return ""
	}
	return f.Go.Version
}

// newerGo is the newer of two Go versions of the form 1.N[.P] ("" is older
// than any).
func newerGo(a, b string) string {
	if goversion.Compare("go"+a, "go"+b) < 0 {
		return b
	}
	return a
}
