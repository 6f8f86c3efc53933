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

package image

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// fakeFile is one entry of a hand-made layer; a name ending in "/" is a directory.
type fakeFile struct {
	name     string
	mode     int64
	uid, gid int
	data     string
}

// fakeImage is an OCI archive made by hand, right as hack/build-image.sh
// makes it until a test changes one thing.
type fakeImage struct {
	t             *testing.T
	files         []fakeFile
	config        imageConfig
	nested        bool      // an image index between index.json and the manifest
	indexPlatform *platform // the platform the nested index gives
	corruptLayer  bool
	wrongDiffID   bool
}

func newFakeImage(t *testing.T) *fakeImage {
	bundle := strings.Repeat(testCert(t), 120)
	f := &fakeImage{t: t, files: []fakeFile{
		{name: "etc/", mode: 0o755},
		{name: "etc/group", mode: 0o644, data: "root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n"},
		{name: "etc/nsswitch.conf", mode: 0o644, data: "hosts: files dns\n"},
		{name: "etc/passwd", mode: 0o644, data: "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"},
		{name: "etc/ssl/", mode: 0o755},
		{name: "etc/ssl/certs/", mode: 0o755},
		{name: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, data: bundle},
		{name: "home/", mode: 0o755},
		{name: "home/nonroot/", mode: 0o700, uid: nonroot, gid: nonroot},
		{name: binaryPath, mode: 0o755, data: "\x7fELF"},
		{name: "root/", mode: 0o700},
		{name: "tmp/", mode: 0o1777},
		{name: "usr/", mode: 0o755},
		{name: "usr/share/", mode: 0o755},
		{name: "usr/share/doc/", mode: 0o755},
		{name: "usr/share/doc/ca-certificates/", mode: 0o755},
		{name: "usr/share/doc/ca-certificates/copyright", mode: 0o644, data: "MPL-2.0"},
	}}
	f.config.OS, f.config.Architecture = "linux", "amd64"
	f.config.Created = "2026-01-02T03:04:05Z"
	f.config.Config.User = "65532:65532"
	f.config.Config.Entrypoint = []string{"/kube-scheduler"}
	f.config.Config.Labels = map[string]string{
		labelVersion:    "v1.2.3-4-gabcdef0",
		labelRevision:   strings.Repeat("ab", 20),
		labelCreated:    "2026-01-02T03:04:05Z",
		labelSource:     "https://github.com/adminsched/scheduler-plugins",
		labelTitle:      "adminsched kube-scheduler",
		labelLicenses:   "Apache-2.0",
		labelKubernetes: "v1.37.2",
	}
	f.config.RootFS.Type = "layers"
	return f
}

func (f *fakeImage) add(e fakeFile) { f.files = append(f.files, e) }

func (f *fakeImage) set(name string, change func(*fakeFile)) {
	for i := range f.files {
		if f.files[i].name == name {
			change(&f.files[i])
			return
		}
	}
	f.t.Fatalf("no file %s in the fake image", name)
}

func (f *fakeImage) remove(name string) {
	for i := range f.files {
		if f.files[i].name == name {
			f.files = append(f.files[:i], f.files[i+1:]...)
			return
		}
	}
	f.t.Fatalf("no file %s in the fake image", name)
}

// write writes the archive into a temporary directory and returns its path.
func (f *fakeImage) write(t *testing.T) string {
	t.Helper()
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	for _, e := range f.files {
		hdr := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.gid, ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg, Size: int64(len(e.data))}
		if strings.HasSuffix(e.name, "/") {
			hdr.Typeflag, hdr.Size = tar.TypeDir, 0
		}
		// tar keeps setuid/setgid/sticky in the mode's high bits (c_ISVTX = 01000).
		must(t, tw.WriteHeader(hdr))
		_, err := tw.Write([]byte(e.data))
		must(t, err)
	}
	must(t, tw.Close())
	diffID := digest(layer.Bytes())
	if f.wrongDiffID {
		diffID = "sha256:" + strings.Repeat("0", 64)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err := zw.Write(layer.Bytes())
	must(t, err)
	must(t, zw.Close())

	blobs := map[string][]byte{}
	put := func(mediaType string, data []byte) descriptor {
		d := descriptor{MediaType: mediaType, Digest: digest(data), Size: int64(len(data))}
		blobs[d.Digest] = data
		return d
	}
	layerDesc := put(mediaTypeLayerGzip, gz.Bytes())
	if f.corruptLayer {
		data := bytes.Clone(gz.Bytes())
		data[len(data)-1] ^= 0xff
		blobs[layerDesc.Digest] = data
	}
	cfg := f.config
	cfg.RootFS.DiffIDs = []string{diffID}
	cfgDesc := put("application/vnd.oci.image.config.v1+json", marshal(t, cfg))
	top := put(mediaTypeManifest, marshal(t, manifest{SchemaVersion: 2, MediaType: mediaTypeManifest, Config: cfgDesc, Layers: []descriptor{layerDesc}}))
	if f.nested {
		top.Platform = f.indexPlatform
		top = put(mediaTypeIndex, marshal(t, index{SchemaVersion: 2, Manifests: []descriptor{top}}))
	}

	path := filepath.Join(t.TempDir(), "fake.oci.tar")
	out, err := os.Create(path)
	must(t, err)
	aw := tar.NewWriter(out)
	file := func(name string, data []byte) {
		must(t, aw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}))
		_, err := aw.Write(data)
		must(t, err)
	}
	file("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`))
	file("index.json", marshal(t, index{SchemaVersion: 2, Manifests: []descriptor{top}}))
	for _, d := range sortedKeys(blobs) {
		file("blobs/sha256/"+strings.TrimPrefix(d, "sha256:"), blobs[d])
	}
	must(t, aw.Close())
	must(t, out.Close())
	return path
}

func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func marshal(t *testing.T, v any) []byte {
	data, err := json.Marshal(v)
	must(t, err)
	return data
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// testCert returns one self-signed certificate in PEM.
func testCert(t *testing.T) string {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<33, 0), IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	must(t, err)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// buildVersionPrinter builds a static program that prints version like
// kube-scheduler --version does, and returns its path.
func buildVersionPrinter(t *testing.T, version string, flags ...string) string {
	t.Helper()
	dir := t.TempDir()
	src := "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(" + `"` + version + `"` + ") }\n"
	must(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module versionprinter\n\ngo 1.22\n"), 0o644))
	bin := filepath.Join(dir, "kube-scheduler")
	cmd := exec.Command("go", append(append([]string{"build"}, flags...), "-o", bin, ".")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the stand-in binary: %v\n%s", err, out)
	}
	return bin
}
