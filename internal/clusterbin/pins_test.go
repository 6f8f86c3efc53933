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
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/adminsched/scheduler-plugins/internal/localcluster"
	"github.com/google/go-cmp/cmp"
)

const testMainMod = `module example.com/playground

go 1.26.0

require (
	k8s.io/kubernetes v1.37.2
	k8s.io/api v0.37.2 // pinned by the replace below
)

require go.etcd.io/etcd/server/v3 v3.7.0 // indirect

replace (
	k8s.io/api => k8s.io/api v0.37.2
)
`

const testKwokMod = "module example.com/kwok\n\ngo 1.26.8\n\nrequire sigs.k8s.io/kwok v0.8.0 // indirect\n"

func testModules() modules {
	return modules{mainMod: []byte(testMainMod), mainSum: []byte("sum\n"), kwokMod: []byte(testKwokMod), kwokSum: []byte("kwok sum\n")}
}

func TestModuleVersion(t *testing.T) {
	for _, tc := range []struct {
		name, gomod, path, want, wantErr string
	}{
		{name: "in a require block", gomod: testMainMod, path: "k8s.io/kubernetes", want: "v1.37.2"},
		{name: "single require line, comment", gomod: testMainMod, path: "go.etcd.io/etcd/server/v3", want: "v3.7.0"},
		{name: "replaced by a version", gomod: testMainMod + "replace k8s.io/kubernetes => k8s.io/kubernetes v1.37.3\n", path: "k8s.io/kubernetes", want: "v1.37.3"},
		{name: "replaced by a directory", gomod: testMainMod + "replace k8s.io/kubernetes v1.37.2 => ../kubernetes\n", path: "k8s.io/kubernetes",
			wantErr: "module k8s.io/kubernetes is replaced by a directory (replace k8s.io/kubernetes v1.37.2 => ../kubernetes): the playground cannot build it without a checkout"},
		{name: "a prefix is not the module", gomod: testMainMod, path: "k8s.io/kube", wantErr: "no requirement on k8s.io/kube"},
		{name: "missing", gomod: testKwokMod, path: "k8s.io/kubernetes", wantErr: "no requirement on k8s.io/kubernetes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := moduleVersion([]byte(tc.gomod), tc.path)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("got %q, %v; want error %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestPins(t *testing.T) {
	got, err := testModules().pins()
	if err != nil {
		t.Fatal(err)
	}
	want := pins{kubernetes: "v1.37.2", etcd: "v3.7.0", kwok: "v0.8.0", minGo: "1.26.8"}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(pins{})); diff != "" {
		t.Errorf("pins (-want +got):\n%s", diff)
	}
	for _, tc := range [][3]string{{"1.26.0", "1.26.8", "1.26.8"}, {"1.27", "1.26.8", "1.27"}, {"1.26.10", "1.26.9", "1.26.10"}, {"", "1.26.0", "1.26.0"}} {
		if got := newerGo(tc[0], tc[1]); got != tc[2] {
			t.Errorf("newerGo(%q, %q) = %q, want %q", tc[0], tc[1], got, tc[2])
		}
	}
}

// TestKeyChangesWithPins: a cache directory is never shared by binaries
// built from different modules or for another platform.
func TestKeyChangesWithPins(t *testing.T) {
	base := testModules()
	baseKey, err := base.key("linux", "amd64")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^linux-amd64-kubernetes-v1\.37\.2-etcd-v3\.7\.0-kwok-v0\.8\.0-[0-9a-f]{12}$`).MatchString(baseKey) {
		t.Errorf("key %q does not name the platform and versions", baseKey)
	}
	if again, _ := testModules().key("linux", "amd64"); again != baseKey {
		t.Errorf("same modules, keys %q and %q", baseKey, again)
	}
	replace := func(b []byte, old, new string) []byte {
		if !bytes.Contains(b, []byte(old)) {
			t.Fatalf("%q not in %s", old, b)
		}
		return bytes.Replace(b, []byte(old), []byte(new), 1)
	}
	seen := map[string]string{baseKey: "base"}
	for name, change := range map[string]func(m *modules, goos, goarch *string){
		"kubernetes": func(m *modules, _, _ *string) { m.mainMod = replace(m.mainMod, "s v1.37.2", "s v1.37.3") },
		"etcd":       func(m *modules, _, _ *string) { m.mainMod = replace(m.mainMod, "v3.7.0", "v3.7.1") },
		"kwok":       func(m *modules, _, _ *string) { m.kwokMod = replace(m.kwokMod, "v0.8.0", "v0.8.1") },
		"a replace":  func(m *modules, _, _ *string) { m.mainMod = replace(m.mainMod, "api v0.37.2\n)", "api v0.37.1\n)") },
		"go.sum":     func(m *modules, _, _ *string) { m.mainSum = []byte("other sum\n") },
		"kwok.sum":   func(m *modules, _, _ *string) { m.kwokSum = []byte("other kwok sum\n") },
		"goos":       func(_ *modules, goos, _ *string) { *goos = "darwin" },
		"goarch":     func(_ *modules, _, goarch *string) { *goarch = "arm64" },
	} {
		m, goos, goarch := testModules(), "linux", "amd64"
		change(&m, &goos, &goarch)
		key, err := m.key(goos, goarch)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if other, ok := seen[key]; ok {
			t.Errorf("a changed %s gives the key of %s: %s", name, other, key)
		}
		seen[key] = name
	}
}

// TestKwokCopyInSync: kwok.mod and kwok.sum are hack/tools/kwok's module,
// which make envtest builds KWOK from.
func TestKwokCopyInSync(t *testing.T) {
	for copied, orig := range map[string]string{"kwok.mod": "../../hack/tools/kwok/go.mod", "kwok.sum": "../../hack/tools/kwok/go.sum"} {
		want, err := os.ReadFile(orig)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(copied)
		if !bytes.Equal(got, want) {
			t.Errorf("internal/clusterbin/%s differs from %s: cp hack/tools/kwok/go.%s internal/clusterbin/%s",
				copied, strings.TrimPrefix(orig, "../../"), strings.TrimPrefix(copied, "kwok."), copied)
		}
	}
}

// TestSameTargetsAsInstallEnvtest: hack/install-envtest.sh (bin/ of a
// checkout) and Ensure (the cache) build the binaries localcluster runs,
// from the same packages with the same version ldflags.
func TestSameTargetsAsInstallEnvtest(t *testing.T) {
	if diff := cmp.Diff(localcluster.Binaries, targetNames()); diff != "" {
		t.Errorf("targets are not the binaries localcluster runs (-localcluster +targets):\n%s", diff)
	}
	script, err := os.ReadFile("../../hack/install-envtest.sh")
	if err != nil {
		t.Fatal(err)
	}
	var scriptPkgs []string
	for _, m := range regexp.MustCompile(`go build [^\n]*?([\w.-]+(?:/[\w.-]+)+)\)?\n`).FindAllSubmatch(bytes.ReplaceAll(script, []byte("\\\n"), nil), -1) {
		scriptPkgs = append(scriptPkgs, string(m[1]))
	}
	if diff := cmp.Diff(targetPackages(), scriptPkgs); diff != "" {
		t.Errorf("packages built (-Ensure +install-envtest.sh):\n%s", diff)
	}
	for _, tg := range targets {
		args := tg.buildArgs("OUT", "${k8s}")
		if tg.versionLdflags && !bytes.Contains(script, []byte(`ldflags="`+args[len(args)-2]+`"`)) {
			t.Errorf("install-envtest.sh's ldflags are not %q", args[len(args)-2])
		}
	}
}

// TestREADMEInstallSection holds the README's "Install the playground" to
// what Ensure does: the cache folder, the minimum Go and the directory's
// name for the current pins.
func TestREADMEInstallSection(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "### Install the playground\n")
	if !ok {
		t.Fatal(`README.md has no "### Install the playground" section`)
	}
	section, _, _ = strings.Cut(section, "\n#")
	p, err := embedded.pins()
	if err != nil {
		t.Fatal(err)
	}
	key, err := embedded.key("linux", "amd64")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"~/.cache/" + CacheSubdir + "/", "Go " + p.minGo + " or later", key[:len(key)-12] + "<hash>", "--assets DIR", "KUBEBUILDER_ASSETS", "build.log"} {
		if !strings.Contains(section, want) {
			t.Errorf("the README's install section does not say %q", want)
		}
	}
}
