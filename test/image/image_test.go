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

// Package image checks the scheduler image that `make image` builds
// (hack/build-image.sh): it reads each OCI archive with the standard library
// alone, checks config, labels and every file of the layers, and runs the
// binary taken from the layer with --version. `make image-test` sets
// IMAGE_ARCHIVES; without it only the checker's own tests run.
package image

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// schedulerMain is the package the image's binary is built from.
const schedulerMain = "github.com/adminsched/scheduler-plugins/cmd/scheduler"

// TestImageArchives checks the archives `make image` wrote. An archive named
// ...-<os>-<arch>.oci.tar holds that platform; any other holds every platform
// of IMAGE_PLATFORMS.
func TestImageArchives(t *testing.T) {
	archives := strings.Fields(os.Getenv("IMAGE_ARCHIVES"))
	if len(archives) == 0 {
		t.Skip("IMAGE_ARCHIVES is not set: run `make image-test`")
	}
	version := os.Getenv("IMAGE_VERSION")
	if version == "" {
		t.Fatal("IMAGE_VERSION must be set with IMAGE_ARCHIVES (the Makefile's VERSION)")
	}
	var all []platform
	for _, s := range strings.Fields(os.Getenv("IMAGE_PLATFORMS")) {
		os, arch, ok := strings.Cut(s, "/")
		if !ok {
			t.Fatalf("IMAGE_PLATFORMS entry %q: want os/arch", s)
		}
		all = append(all, platform{OS: os, Architecture: arch})
	}
	if len(all) == 0 {
		t.Fatal("IMAGE_PLATFORMS must be set with IMAGE_ARCHIVES, for example \"linux/amd64 linux/arm64\"")
	}

	for _, archive := range archives {
		want := all
		for _, p := range all {
			if strings.HasSuffix(archive, "-"+p.OS+"-"+p.Architecture+".oci.tar") {
				want = []platform{p}
			}
		}
		t.Run(filepath.Base(archive), func(t *testing.T) {
			l, err := readLayout(archive)
			if err != nil {
				t.Fatal(err)
			}
			imgs, err := l.images()
			if err != nil {
				t.Fatal(err)
			}
			var got []platform
			for _, img := range imgs {
				got = append(got, platform{OS: img.Config.OS, Architecture: img.Config.Architecture})
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("platforms (-want +got):\n%s", diff)
			}
			for i, img := range imgs {
				p := want[i]
				t.Run(p.OS+"-"+p.Architecture, func(t *testing.T) {
					for _, err := range checkImage(img, p, version) {
						t.Error(err)
					}
					bin, err := writeBinary(img, t.TempDir())
					if err != nil {
						t.Fatal(err)
					}
					if err := checkStatic(bin, p.Architecture); err != nil {
						t.Errorf("/%s: %v", binaryPath, err)
					}
					for _, err := range checkBuildInfo(bin, img.Files[binaryPath].Data, schedulerMain, p, img.Config.Config.Labels) {
						t.Errorf("/%s: %v", binaryPath, err)
					}
					if p.OS != runtime.GOOS || p.Architecture != runtime.GOARCH {
						t.Logf("not running the %s binary on %s/%s", p, runtime.GOOS, runtime.GOARCH)
						return
					}
					if err := checkVersion(context.Background(), bin, img.Config.Config.Labels); err != nil {
						t.Error(err)
					}
				})
			}
		})
	}
}

// TestCheckImage feeds the checker hand-made archives, each wrong in one way,
// and expects exactly the errors that name it; the first is right.
func TestCheckImage(t *testing.T) {
	amd64 := platform{OS: "linux", Architecture: "amd64"}
	tests := []struct {
		name    string
		mutate  func(*fakeImage)
		wantErr string   // from reading the archive
		want    []string // from checkImage
	}{
		{
			name:   "as built",
			mutate: func(*fakeImage) {},
		},
		{
			name:   "runs as root",
			mutate: func(f *fakeImage) { f.config.Config.User = "0:0" },
			want:   []string{`user "0:0", want "65532:65532" (nonroot)`},
		},
		{
			name:   "user name instead of ids",
			mutate: func(f *fakeImage) { f.config.Config.User = "nonroot" },
			want:   []string{`user "nonroot", want "65532:65532" (nonroot)`},
		},
		{
			name: "a shell in the image",
			mutate: func(f *fakeImage) {
				f.add(fakeFile{name: "bin/", mode: 0o755})
				f.add(fakeFile{name: "bin/sh", mode: 0o755, data: "\x7fELF"})
			},
			want: []string{"/bin (drwxr-xr-x): not expected in the image", "/bin/sh (-rwxr-xr-x): not expected in the image"},
		},
		{
			name:   "a package manager's database",
			mutate: func(f *fakeImage) { f.add(fakeFile{name: "var/lib/dpkg/status", mode: 0o644}) },
			want:   []string{"/var/lib/dpkg/status (-rw-r--r--): not expected in the image"},
		},
		{
			name:   "tmp without the sticky bit",
			mutate: func(f *fakeImage) { f.set("tmp/", func(e *fakeFile) { e.mode = 0o777 }) },
			want:   []string{"/tmp: mode drwxrwxrwx, want dtrwxrwxrwx"},
		},
		{
			name:   "binary only root can run",
			mutate: func(f *fakeImage) { f.set(binaryPath, func(e *fakeFile) { e.mode = 0o700 }) },
			want: []string{
				"/kube-scheduler: mode -rwx------, want -rwxr-xr-x",
				"/kube-scheduler: mode -rwx------ owner 0:0: nonroot (65532) cannot read and run it",
			},
		},
		{
			name:   "home owned by root",
			mutate: func(f *fakeImage) { f.set("home/nonroot/", func(e *fakeFile) { e.uid, e.gid = 0, 0 }) },
			want:   []string{"/home/nonroot: owner 0:0, want 65532:65532"},
		},
		{
			name:   "no CA bundle",
			mutate: func(f *fakeImage) { f.remove("etc/ssl/certs/ca-certificates.crt") },
			want:   []string{"/etc/ssl/certs/ca-certificates.crt: missing"},
		},
		{
			name: "a CA bundle of one",
			mutate: func(f *fakeImage) {
				f.set("etc/ssl/certs/ca-certificates.crt", func(e *fakeFile) { e.data = testCert(t) })
			},
			want: []string{"/etc/ssl/certs/ca-certificates.crt holds 1 certificates, want the full bundle (100 or more)"},
		},
		{
			name: "no nonroot account",
			mutate: func(f *fakeImage) {
				f.set("etc/passwd", func(e *fakeFile) { e.data = "root:x:0:0:root:/root:/sbin/nologin\n" })
			},
			want: []string{`/etc/passwd has no line "nonroot:x:65532:65532:"...`},
		},
		{
			name:   "wrong architecture",
			mutate: func(f *fakeImage) { f.config.Architecture = "arm64" },
			want:   []string{"config platform linux/arm64, want linux/amd64"},
		},
		{
			name: "index and config disagree",
			mutate: func(f *fakeImage) {
				f.nested = true
				f.indexPlatform = &platform{OS: "linux", Architecture: "arm64"}
			},
			want: []string{"index says platform linux/arm64, config says linux/amd64"},
		},
		{
			name:   "a shell entrypoint",
			mutate: func(f *fakeImage) { f.config.Config.Entrypoint = []string{"/bin/sh", "-c"} },
			want:   []string{`entrypoint ["/bin/sh" "-c"], want ["/kube-scheduler"]`},
		},
		{
			name: "version label not the build's",
			mutate: func(f *fakeImage) {
				f.config.Config.Labels[labelVersion] = "v0.0.1"
				delete(f.config.Config.Labels, labelLicenses)
			},
			want: []string{
				`label org.opencontainers.image.version="v0.0.1", want "v1.2.3-4-gabcdef0"`,
				`label org.opencontainers.image.licenses="", want Apache-2.0`,
			},
		},
		{
			name:    "a whiteout",
			mutate:  func(f *fakeImage) { f.add(fakeFile{name: "etc/.wh.shadow", mode: 0o644}) },
			wantErr: "etc/.wh.shadow: whiteout entry in an image built from scratch",
		},
		{
			name:    "a blob that does not match its digest",
			mutate:  func(f *fakeImage) { f.corruptLayer = true },
			wantErr: "content has digest sha256:",
		},
		{
			name:    "a layer the config does not list",
			mutate:  func(f *fakeImage) { f.wrongDiffID = true },
			wantErr: "config's diff_id sha256:0000",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeImage(t)
			tc.mutate(f)
			l, err := readLayout(f.write(t))
			if err != nil {
				t.Fatal(err)
			}
			imgs, err := l.images()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("reading the archive: error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(imgs) != 1 {
				t.Fatalf("%d images, want 1", len(imgs))
			}
			var got []string
			for _, err := range checkImage(imgs[0], amd64, "v1.2.3-4-gabcdef0") {
				got = append(got, err.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCheckStatic runs the ELF check on a static binary built here and on the
// host's dynamically linked /bin/true.
func TestCheckStatic(t *testing.T) {
	static := buildVersionPrinter(t, "Kubernetes v1.37.2+adminsched.v1")
	tests := []struct {
		name, path, arch string
		want             string // error, "" for none
	}{
		{name: "static", path: static, arch: runtime.GOARCH},
		{name: "other architecture", path: static, arch: otherArch(), want: "ELF machine"},
		{name: "dynamic", path: "/bin/true", arch: runtime.GOARCH, want: "dynamically linked"},
		{name: "unknown architecture", path: static, arch: "mips", want: `architecture "mips": want one of`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.path == "/bin/true" {
				if _, err := os.Stat(tc.path); err != nil {
					t.Fatalf("this test needs the host's %s: %v", tc.path, err)
				}
			}
			err := checkStatic(tc.path, tc.arch)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestCheckBuildInfo checks the build information of stand-in binaries built
// here with and without the image's flags.
func TestCheckBuildInfo(t *testing.T) {
	host := platform{OS: "linux", Architecture: runtime.GOARCH}
	labels := map[string]string{labelKubernetes: "v1.37.2", labelVersion: "v1.2.3"}
	const version = "Kubernetes v1.37.2+adminsched.v1.2.3"
	tests := []struct {
		name   string
		bin    string
		labels map[string]string
		p      platform
		want   []string
	}{
		{name: "as the image builds it", bin: buildVersionPrinter(t, version, "-trimpath"), labels: labels, p: host},
		{
			name:   "without -trimpath",
			bin:    buildVersionPrinter(t, version),
			labels: labels, p: host,
			want: []string{`built with -trimpath="", want "true"`},
		},
		{
			name:   "other version",
			bin:    buildVersionPrinter(t, version, "-trimpath"),
			labels: map[string]string{labelKubernetes: "v1.37.2", labelVersion: "v1.2.4"},
			p:      host,
			want:   []string{`the binary does not hold the version "v1.37.2+adminsched.v1.2.4" of the labels`},
		},
		{
			name: "other platform", bin: buildVersionPrinter(t, version, "-trimpath"), labels: labels,
			p:    platform{OS: "linux", Architecture: otherArch()},
			want: []string{fmt.Sprintf(`built with GOARCH=%q, want %q`, runtime.GOARCH, otherArch())},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, err := os.ReadFile(tc.bin)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, err := range checkBuildInfo(tc.bin, data, "versionprinter", tc.p, tc.labels) {
				got = append(got, err.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCheckVersion runs a stand-in binary that prints a version, matching the
// labels or not.
func TestCheckVersion(t *testing.T) {
	bin := buildVersionPrinter(t, "Kubernetes v1.37.2+adminsched.v1.2.3")
	tests := []struct {
		name    string
		labels  map[string]string
		wantErr string
	}{
		{name: "matches", labels: map[string]string{labelKubernetes: "v1.37.2", labelVersion: "v1.2.3"}},
		{
			name:    "other version",
			labels:  map[string]string{labelKubernetes: "v1.37.2", labelVersion: "v1.2.4"},
			wantErr: `printed "Kubernetes v1.37.2+adminsched.v1.2.3", want "Kubernetes v1.37.2+adminsched.v1.2.4"`,
		},
		{
			name:    "other base",
			labels:  map[string]string{labelKubernetes: "v1.36.0", labelVersion: "v1.2.3"},
			wantErr: `want "Kubernetes v1.36.0+adminsched.v1.2.3"`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkVersion(context.Background(), bin, tc.labels)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func otherArch() string {
	if runtime.GOARCH == "arm64" {
		return "amd64"
	}
	return "arm64"
}

// BenchmarkReadArchive reads and checks the first archive of IMAGE_ARCHIVES
// as TestImageArchives does (no binary run): what the race detector costs
// `make image-test`.
func BenchmarkReadArchive(b *testing.B) {
	archives := strings.Fields(os.Getenv("IMAGE_ARCHIVES"))
	if len(archives) == 0 {
		b.Skip("IMAGE_ARCHIVES is not set: run `make image` first")
	}
	st, err := os.Stat(archives[0])
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	for b.Loop() {
		l, err := readLayout(archives[0])
		if err != nil {
			b.Fatal(err)
		}
		imgs, err := l.images()
		if err != nil {
			b.Fatal(err)
		}
		for _, img := range imgs {
			p := platform{OS: img.Config.OS, Architecture: img.Config.Architecture}
			_ = checkImage(img, p, img.Config.Config.Labels[labelVersion])
		}
	}
}
