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
	"bytes"
	"context"
	"crypto/x509"
	"debug/buildinfo"
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"time"
)

const (
	labelVersion    = "org.opencontainers.image.version"
	labelRevision   = "org.opencontainers.image.revision"
	labelCreated    = "org.opencontainers.image.created"
	labelSource     = "org.opencontainers.image.source"
	labelTitle      = "org.opencontainers.image.title"
	labelLicenses   = "org.opencontainers.image.licenses"
	labelKubernetes = "io.github.adminsched.kubernetes-version"
	binaryPath      = "kube-scheduler"
	nonroot         = 65532
)

// wantFile is what one path of the image must be.
type wantFile struct {
	mode     fs.FileMode
	uid, gid int
}

// wantFiles is every path the image holds: a static binary and the few files
// distroless/static gives a Go program (accounts, resolver order, CA bundle,
// /tmp). No shell, no package manager, no time zone data (nothing here loads
// a zone by name; logs are in UTC).
var wantFiles = map[string]wantFile{
	"etc":                               {fs.ModeDir | 0o755, 0, 0},
	"etc/group":                         {0o644, 0, 0},
	"etc/nsswitch.conf":                 {0o644, 0, 0},
	"etc/passwd":                        {0o644, 0, 0},
	"etc/ssl":                           {fs.ModeDir | 0o755, 0, 0},
	"etc/ssl/certs":                     {fs.ModeDir | 0o755, 0, 0},
	"etc/ssl/certs/ca-certificates.crt": {0o644, 0, 0},
	"home":                              {fs.ModeDir | 0o755, 0, 0},
	"home/nonroot":                      {fs.ModeDir | 0o700, nonroot, nonroot},
	binaryPath:                          {0o755, 0, 0},
	"root":                              {fs.ModeDir | 0o700, 0, 0},
	"tmp":                               {fs.ModeDir | fs.ModeSticky | 0o777, 0, 0},
	"usr":                               {fs.ModeDir | 0o755, 0, 0},
	"usr/share":                         {fs.ModeDir | 0o755, 0, 0},
	"usr/share/doc":                     {fs.ModeDir | 0o755, 0, 0},
	"usr/share/doc/ca-certificates":     {fs.ModeDir | 0o755, 0, 0},
	"usr/share/doc/ca-certificates/copyright": {0o644, 0, 0},
}

var commitRE = regexp.MustCompile(`^[0-9a-f]{40}$`)

// checkImage returns every way img differs from the scheduler image for
// platform p whose version label is version.
func checkImage(img image, p platform, version string) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	got := platform{OS: img.Config.OS, Architecture: img.Config.Architecture}
	if got != p {
		bad("config platform %s, want %s", got, p)
	}
	if img.Platform != nil && *img.Platform != got {
		bad("index says platform %s, config says %s", *img.Platform, got)
	}
	c := img.Config.Config
	if !slices.Equal(c.Entrypoint, []string{"/" + binaryPath}) {
		bad("entrypoint %q, want [\"/%s\"]", c.Entrypoint, binaryPath)
	}
	if len(c.Cmd) != 0 {
		bad("cmd %q, want none (flags come from the pod spec)", c.Cmd)
	}
	if want := fmt.Sprintf("%d:%d", nonroot, nonroot); c.User != want {
		bad("user %q, want %q (nonroot)", c.User, want)
	}

	l := c.Labels
	if l[labelVersion] != version {
		bad("label %s=%q, want %q", labelVersion, l[labelVersion], version)
	}
	if !commitRE.MatchString(l[labelRevision]) {
		bad("label %s=%q, want a 40-digit commit", labelRevision, l[labelRevision])
	}
	if _, err := time.Parse(time.RFC3339, l[labelCreated]); err != nil {
		bad("label %s=%q, want an RFC 3339 time", labelCreated, l[labelCreated])
	}
	if !strings.HasPrefix(l[labelSource], "https://") {
		bad("label %s=%q, want the repository's https URL", labelSource, l[labelSource])
	}
	if l[labelTitle] == "" {
		bad("label %s is missing", labelTitle)
	}
	if l[labelLicenses] != "Apache-2.0" {
		bad("label %s=%q, want Apache-2.0", labelLicenses, l[labelLicenses])
	}
	if !regexp.MustCompile(`^v1\.[0-9]+\.[0-9]+$`).MatchString(l[labelKubernetes]) {
		bad("label %s=%q, want the Kubernetes base version v1.x.y", labelKubernetes, l[labelKubernetes])
	}

	errs = append(errs, checkFiles(img.Files)...)
	return errs
}

func checkFiles(files map[string]file) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	for _, name := range sortedKeys(files) {
		f := files[name]
		w, ok := wantFiles[name]
		if !ok {
			bad("/%s (%v): not expected in the image", name, f.Mode)
			continue
		}
		if f.Mode != w.mode {
			bad("/%s: mode %v, want %v", name, f.Mode, w.mode)
		}
		if f.UID != w.uid || f.GID != w.gid {
			bad("/%s: owner %d:%d, want %d:%d", name, f.UID, f.GID, w.uid, w.gid)
		}
	}
	for _, name := range sortedKeys(wantFiles) {
		if _, ok := files[name]; !ok {
			bad("/%s: missing", name)
		}
	}
	if f, ok := files[binaryPath]; ok && !readableBy(f, nonroot, nonroot) {
		bad("/%s: mode %v owner %d:%d: nonroot (%d) cannot read and run it", binaryPath, f.Mode, f.UID, f.GID, nonroot)
	}
	if f, ok := files["etc/passwd"]; ok {
		for _, want := range []string{"root:x:0:0:", fmt.Sprintf("nonroot:x:%d:%d:", nonroot, nonroot)} {
			if !hasLinePrefix(f.Data, want) {
				bad("/etc/passwd has no line %q...", want)
			}
		}
	}
	if f, ok := files["etc/group"]; ok {
		for _, want := range []string{"root:x:0:", fmt.Sprintf("nonroot:x:%d:", nonroot)} {
			if !hasLinePrefix(f.Data, want) {
				bad("/etc/group has no line %q...", want)
			}
		}
	}
	if f, ok := files["etc/nsswitch.conf"]; ok && !hasLinePrefix(f.Data, "hosts: files dns") {
		bad("/etc/nsswitch.conf: want \"hosts: files dns\"")
	}
	if f, ok := files["etc/ssl/certs/ca-certificates.crt"]; ok {
		// Debian 12's bundle holds about 140; a handful means a wrong source.
		if n := bytes.Count(f.Data, []byte("-----BEGIN CERTIFICATE-----")); n < 100 {
			bad("/etc/ssl/certs/ca-certificates.crt holds %d certificates, want the full bundle (100 or more)", n)
		} else if !x509.NewCertPool().AppendCertsFromPEM(f.Data) {
			bad("/etc/ssl/certs/ca-certificates.crt: no certificate parses")
		}
	}
	return errs
}

// readableBy says whether uid:gid may read and execute f by its mode bits.
func readableBy(f file, uid, gid int) bool {
	perm := f.Mode.Perm()
	switch {
	case f.UID == uid:
		return perm&0o500 == 0o500
	case f.GID == gid:
		return perm&0o050 == 0o050
	default:
		return perm&0o005 == 0o005
	}
}

func hasLinePrefix(data []byte, prefix string) bool {
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, prefix) {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

var elfMachines = map[string]elf.Machine{
	"amd64":   elf.EM_X86_64,
	"arm64":   elf.EM_AARCH64,
	"arm":     elf.EM_ARM,
	"ppc64le": elf.EM_PPC64,
	"s390x":   elf.EM_S390,
	"riscv64": elf.EM_RISCV,
}

// checkStatic returns why the ELF file at path is not a statically linked
// Linux binary for arch, or nil.
func checkStatic(path, arch string) error {
	f, err := elf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	want, ok := elfMachines[arch]
	if !ok {
		return fmt.Errorf("architecture %q: want one of %v", arch, sortedKeys(elfMachines))
	}
	if f.Machine != want {
		return fmt.Errorf("ELF machine %v, want %v for %s", f.Machine, want, arch)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return errors.New("has a program interpreter (PT_INTERP): dynamically linked")
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		return err
	}
	if len(libs) > 0 {
		return fmt.Errorf("needs shared libraries (DT_NEEDED) %q", libs)
	}
	return nil
}

// checkBuildInfo returns how the Go build information of the binary at path
// differs from a static, -trimpath build of mainPath for p. The -ldflags are
// not recorded with -trimpath, so for a binary that cannot run here the
// version from the labels is looked for in its data instead.
func checkBuildInfo(path string, data []byte, mainPath string, p platform, labels map[string]string) []error {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return []error{err}
	}
	var errs []error
	if bi.Path != mainPath {
		errs = append(errs, fmt.Errorf("built from %s, want %s", bi.Path, mainPath))
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	for _, want := range [][2]string{{"CGO_ENABLED", "0"}, {"-trimpath", "true"}, {"GOOS", p.OS}, {"GOARCH", p.Architecture}} {
		if got, ok := settings[want[0]]; !ok || got != want[1] {
			errs = append(errs, fmt.Errorf("built with %s=%q, want %q", want[0], got, want[1]))
		}
	}
	if v := labels[labelKubernetes] + "+adminsched." + labels[labelVersion]; !bytes.Contains(data, []byte(v)) {
		errs = append(errs, fmt.Errorf("the binary does not hold the version %q of the labels", v))
	}
	return errs
}

// checkVersion runs the binary with --version and compares what it prints
// with the image's labels: "Kubernetes <base>+adminsched.<version>".
func checkVersion(ctx context.Context, path string, labels map[string]string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("%s --version: %w; stderr: %s", path, err, stderr.String())
	}
	want := "Kubernetes " + labels[labelKubernetes] + "+adminsched." + labels[labelVersion]
	if got := strings.TrimSpace(string(out)); got != want {
		return fmt.Errorf("%s --version printed %q, want %q (from the labels)", path, got, want)
	}
	return nil
}

// writeBinary writes the image's binary into dir, executable, and returns its path.
func writeBinary(img image, dir string) (string, error) {
	f, ok := img.Files[binaryPath]
	if !ok || !f.Mode.IsRegular() {
		return "", fmt.Errorf("/%s: not a regular file in the image", binaryPath)
	}
	p := dir + "/" + binaryPath
	return p, os.WriteFile(p, f.Data, 0o755)
}
