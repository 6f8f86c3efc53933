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

package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/adminsched/scheduler-plugins/test/integration/framework"
)

const (
	installDir    = "../../manifests/install"
	componentsDir = installDir + "/components"
	// allPluginsOverlay lists both components, as the README shows.
	allPluginsOverlay = "../../examples/install-all-plugins"
)

// kustomizeWithComponents renders manifests/install with components (the
// names of directories under manifests/install/components, in that order)
// through an overlay written in a temp dir, as a user's overlay lists them.
func kustomizeWithComponents(t testing.TB, components ...string) []*unstructured.Unstructured {
	t.Helper()
	dir := t.TempDir()
	rel := func(path string) string {
		abs, err := filepath.Abs(path)
		if err != nil {
			t.Fatal(err)
		}
		// kustomize refuses absolute paths to a base.
		r, err := filepath.Rel(dir, abs)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - %s\ncomponents:\n", rel(installDir))
	for _, c := range components {
		fmt.Fprintf(&b, "  - %s\n", rel(componentsDir+"/"+c))
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return kustomize(t, dir)
}

// renderedConfig returns the scheduler config of the ConfigMap in objs.
func renderedConfig(t testing.TB, source string, objs []*unstructured.Unstructured) *configv1.KubeSchedulerConfiguration {
	t.Helper()
	in := &installation{objs: objs}
	in.readObjects(t, source)
	return in.config
}

// pluginEntries returns the profile's multiPoint plugins (name and weight)
// and its args by plugin name, as JSON values; it fails unless the config
// holds exactly one profile, for custom-scheduler.
func pluginEntries(t testing.TB, source string, cfg *configv1.KubeSchedulerConfiguration) ([]string, map[string]any) {
	t.Helper()
	if len(cfg.Profiles) != 1 || cfg.Profiles[0].SchedulerName == nil || *cfg.Profiles[0].SchedulerName != schedulerName {
		t.Fatalf("%s: want one profile for %s, got %d", source, schedulerName, len(cfg.Profiles))
	}
	p := cfg.Profiles[0]
	var enabled []string
	if p.Plugins != nil {
		for _, e := range p.Plugins.MultiPoint.Enabled {
			w := "-"
			if e.Weight != nil {
				w = fmt.Sprint(*e.Weight)
			}
			enabled = append(enabled, e.Name+"/"+w)
		}
	}
	args := map[string]any{}
	for _, pc := range p.PluginConfig {
		var v any
		if err := json.Unmarshal(pc.Args.Raw, &v); err != nil {
			t.Fatalf("%s: args of %s: %v", source, pc.Name, err)
		}
		args[pc.Name] = v
	}
	return enabled, args
}

// TestInstallComponentsRender renders manifests/install with each
// component alone, with each two and all three in every order, and through
// examples/install-all-plugins, and checks what the components change: the
// ConfigMap's profile gains the component's plugin, weight and args, and
// keeps the base's NodeLessPods and lease; every other object is the base's
// (the components need no RBAC of their own); the same components give the
// same objects in any order, so the copies of a combined config cannot
// drift apart, and each plugin's args are those of its component alone.
func TestInstallComponentsRender(t *testing.T) {
	base := kustomize(t, installDir)
	baseConfig := renderedConfig(t, "manifests/install", base)
	baseEnabled, baseArgs := pluginEntries(t, "manifests/install", baseConfig)
	if want := []string{"NodeLessPods/3"}; !slices.Equal(baseEnabled, want) {
		t.Fatalf("manifests/install enables %v, want %v: adapt the test", baseEnabled, want)
	}
	const (
		pp  = "PlacementPolicy/5"
		mw  = "MaintenanceWindow/2"
		ods = "OnDemandShare/2"
	)
	type rendering struct {
		source  string
		objs    []*unstructured.Unstructured
		enabled []string
	}
	with := func(components ...string) rendering {
		return rendering{strings.Join(components, "+"), kustomizeWithComponents(t, components...), nil}
	}
	enabling := func(r rendering, enabled ...string) rendering { r.enabled = enabled; return r }
	renderings := []rendering{
		enabling(with("placementpolicy"), pp),
		enabling(with("maintenancewindow"), mw),
		enabling(with("ondemandshare"), ods),
		// Consecutive renderings that enable the same plugins must give
		// the same objects: the components in any order.
		enabling(with("placementpolicy", "ondemandshare"), pp, ods),
		enabling(with("ondemandshare", "placementpolicy"), pp, ods),
		enabling(with("maintenancewindow", "ondemandshare"), mw, ods),
		enabling(with("ondemandshare", "maintenancewindow"), mw, ods),
		enabling(with("placementpolicy", "maintenancewindow"), pp, mw),
		enabling(with("maintenancewindow", "placementpolicy"), pp, mw),
	}
	for _, order := range [][]string{
		{"placementpolicy", "maintenancewindow", "ondemandshare"},
		{"maintenancewindow", "placementpolicy", "ondemandshare"},
		{"placementpolicy", "ondemandshare", "maintenancewindow"},
		{"ondemandshare", "placementpolicy", "maintenancewindow"},
		{"maintenancewindow", "ondemandshare", "placementpolicy"},
		{"ondemandshare", "maintenancewindow", "placementpolicy"},
	} {
		renderings = append(renderings, enabling(with(order...), pp, mw, ods))
	}
	renderings = append(renderings,
		rendering{"examples/install-all-plugins", kustomize(t, allPluginsOverlay), []string{pp, mw, ods}},
	)
	// The args of each plugin, as its own component sets them.
	componentArgs := map[string]any{}
	for _, r := range renderings {
		cfg := renderedConfig(t, r.source, r.objs)
		if diff := cmp.Diff(baseConfig.LeaderElection, cfg.LeaderElection); diff != "" {
			t.Errorf("%s: leaderElection differs from the base's (-base +got):\n%s", r.source, diff)
		}
		enabled, args := pluginEntries(t, r.source, cfg)
		if want := append(slices.Clone(baseEnabled), r.enabled...); !slices.Equal(enabled, want) {
			t.Errorf("%s: multiPoint enables %v, want %v", r.source, enabled, want)
		}
		if diff := cmp.Diff(baseArgs["NodeLessPods"], args["NodeLessPods"]); diff != "" {
			t.Errorf("%s: NodeLessPods args differ from the base's (-base +got):\n%s", r.source, diff)
		}
		for _, e := range r.enabled {
			name, _, _ := strings.Cut(e, "/")
			if args[name] == nil {
				t.Errorf("%s: no args for %s", r.source, name)
				continue
			}
			if first, ok := componentArgs[name]; !ok {
				componentArgs[name] = args[name]
			} else if diff := cmp.Diff(first, args[name]); diff != "" {
				t.Errorf("%s: %s args differ from those of its component alone (-alone +got):\n%s", r.source, name, diff)
			}
		}
		if len(args) != len(enabled) {
			t.Errorf("%s: args for %d plugins, %d enabled", r.source, len(args), len(enabled))
		}
		if len(r.objs) != len(base) {
			t.Errorf("%s: %d objects, the base has %d", r.source, len(r.objs), len(base))
			continue
		}
		for i, o := range r.objs {
			if o.GetKind() == "ConfigMap" {
				continue
			}
			if diff := cmp.Diff(base[i].Object, o.Object); diff != "" {
				t.Errorf("%s: %s %s differs from the base's (-base +got):\n%s", r.source, o.GetKind(), o.GetName(), diff)
			}
		}
	}
	for i, r := range renderings[1:] {
		first := renderings[i]
		if !slices.Equal(first.enabled, r.enabled) {
			continue
		}
		if diff := cmp.Diff(objectMaps(first.objs), objectMaps(r.objs)); diff != "" {
			t.Errorf("%s renders other objects than %s (-%s +%s):\n%s", r.source, first.source, first.source, r.source, diff)
		}
	}
}

func objectMaps(objs []*unstructured.Unstructured) []map[string]any {
	var out []map[string]any
	for _, o := range objs {
		out = append(out, o.Object)
	}
	return out
}

// TestInstallComponents applies manifests/install with each component, and
// with both, runs the binary as the Deployment does (the ConfigMap's config,
// the ServiceAccount's token) and shows each plugin act on three empty nodes
// that NodeLessPods alone would fill one pod each: eu-open (an EU region, in
// a maintenance window now), eu-free (an EU region) and us-free. Three pods
// of a namespace labelled data-residency=eu (the PlacementPolicy
// component's example rule) and three of an unlabelled one are created in
// turn: PlacementPolicy keeps the first off us-free, MaintenanceWindow keeps
// all off eu-open, and both together put the first three on eu-free; with
// the ondemandshare component too, the guard's informers run with the
// ServiceAccount's token and the same placements hold.
func TestInstallComponents(t *testing.T) {
	for _, c := range []struct {
		name       string
		components []string
		// Where the pods of each namespace may land.
		resident, other []string
	}{
		{"placementpolicy", []string{"placementpolicy"}, []string{"eu-open", "eu-free"}, []string{"eu-open", "eu-free", "us-free"}},
		{"maintenancewindow", []string{"maintenancewindow"}, []string{"eu-free", "us-free"}, []string{"eu-free", "us-free"}},
		{"both", []string{"placementpolicy", "maintenancewindow"}, []string{"eu-free"}, []string{"eu-free", "us-free"}},
		// OnDemandShare's example policy selects no pod here (a namespace
		// label, and bare pods have no workload): its informers run with
		// the ServiceAccount's token, and it changes no placement.
		{"all", []string{"placementpolicy", "maintenancewindow", "ondemandshare"}, []string{"eu-free"}, []string{"eu-free", "us-free"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tc := newTestContext(t)
			in := tc.installObjects("manifests/install with "+strings.Join(c.components, ", "), kustomizeWithComponents(t, c.components...))
			region := func(r string) nodeOption {
				return withLabels(map[string]string{v1.LabelTopologyRegion: r})
			}
			// Names unique per subtest: node deletion is not waited for.
			node := func(n string) string { return c.name + "-" + n }
			// Before the scheduler starts, so that its namespace informer
			// holds the label when the first pod comes.
			resident := tc.createNamespace(tc.ns+"-eu", map[string]string{"data-residency": "eu"})
			tc.createNodes(
				makeNode(node("eu-open"), region("eu-west-1"), withWindow(windowFrom(-time.Hour, 2*time.Hour))),
				makeNode(node("eu-free"), region("eu-west-1")),
				makeNode(node("us-free"), region("us-east-1")))
			args, _ := tc.schedulerArgs(in, in.config)
			proc := tc.runBinary("components-scheduler", args...)
			tc.waitForLeader([]*framework.Process{proc})

			for _, group := range []struct {
				ns      string
				allowed []string
			}{{resident, c.resident}, {tc.ns, c.other}} {
				var names []string
				for i := range 3 {
					pod := tc.makePod(fmt.Sprintf("p-%d", i))
					pod.Namespace = group.ns
					names = append(names, tc.createPod(pod).Name)
				}
				placed := tc.waitScheduledIn(group.ns, names...)
				t.Logf("%s: pods of %s on %v", c.name, group.ns, placed)
				for pod, n := range placed {
					if !slices.Contains(group.allowed, strings.TrimPrefix(n, c.name+"-")) {
						t.Errorf("pod %s/%s is on %s, want one of %v", group.ns, pod, n, group.allowed)
					}
				}
			}
			if lines := forbidden.FindAllString(proc.Output(), -1); len(lines) > 0 {
				t.Errorf("the scheduler running as the ServiceAccount was refused %d times (first: %q): the component needs RBAC", len(lines), lines[0])
			}
		})
	}
}

var (
	// readmeKustomizeCommand matches the kustomizations a README command
	// renders or applies.
	readmeKustomizeCommand = regexp.MustCompile(`kubectl (?:(?:apply|delete) -k|kustomize) ([\w./-]+)`)
	// readmeKustomizationFile is the first line of a README block that
	// holds a kustomization of the reader's: "# <dir>/kustomization.yaml".
	readmeKustomizationFile = regexp.MustCompile(`^# ([\w./-]+)/kustomization\.yaml\b`)
)

// TestInstallREADMECommands runs bin/kubectl's `kubectl kustomize` (the
// kustomize of `kubectl apply -k`) on every kustomization that a command of
// manifests/install/README.md renders or applies, in a copy of manifests/
// and examples/ next to the kustomization files the README shows: each must
// render, equal to what the tests' kustomize renders, with a config the
// scheduler's strict decoding accepts; and together they must enable every
// component's plugin.
func TestInstallREADMECommands(t *testing.T) {
	kubectl := os.Getenv("KUBECTL")
	if kubectl == "" {
		kubectl, _ = filepath.Abs("../../bin/kubectl")
	}
	if _, err := os.Stat(kubectl); err != nil {
		t.Fatalf("this test runs %s: build it with `make kubectl` (or set KUBECTL): %v", kubectl, err)
	}
	readme, err := os.ReadFile(installDir + "/README.md")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	for _, dir := range []string{"manifests", "examples"} {
		if err := os.CopyFS(filepath.Join(work, dir), os.DirFS("../../"+dir)); err != nil {
			t.Fatal(err)
		}
	}
	// The README's own kustomizations: fenced blocks that start with
	// "# <dir>/kustomization.yaml".
	blocks := strings.Split(string(readme), "```")
	for i := 1; i < len(blocks); i += 2 {
		_, body, _ := strings.Cut(blocks[i], "\n")
		if m := readmeKustomizationFile.FindStringSubmatch(body); m != nil {
			dir := filepath.Join(work, m[1])
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}

	enabled := map[string]bool{}
	var paths []string
	for _, m := range readmeKustomizeCommand.FindAllStringSubmatch(string(readme), -1) {
		if !slices.Contains(paths, m[1]) {
			paths = append(paths, m[1])
		}
	}
	for _, path := range paths {
		cmd := exec.Command(kubectl, "kustomize", path)
		cmd.Dir = work
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if exit, ok := err.(*exec.ExitError); ok {
				stderr = exit.Stderr
			}
			t.Errorf("kubectl kustomize %s (a command of the README): %v: %s", path, err, stderr)
			continue
		}
		got := decodeObjects(t, string(out))
		want := kustomize(t, filepath.Join(work, path))
		if diff := cmp.Diff(normalized(t, want), normalized(t, got)); diff != "" {
			t.Errorf("kubectl kustomize %s renders other objects than the tests' kustomize (-tests +kubectl):\n%s", path, diff)
		}
		var names []string
		for _, o := range want {
			if o.GetKind() == "ConfigMap" && o.GetName() == "custom-scheduler-config" {
				e, _ := pluginEntries(t, path, renderedConfig(t, path, want))
				for _, p := range e {
					name, _, _ := strings.Cut(p, "/")
					enabled[name] = true
					names = append(names, name)
				}
			}
		}
		t.Logf("kubectl kustomize %s: %d objects, plugins %v", path, len(got), names)
	}
	components, err := os.ReadDir(componentsDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range components {
		var found bool
		for name := range enabled {
			found = found || strings.EqualFold(name, c.Name())
		}
		if !found {
			t.Errorf("no command of the README applies a kustomization with components/%s (plugins enabled: %v)", c.Name(), enabled)
		}
	}
}

// normalized returns objs as JSON values (so that numbers decoded by
// different decoders compare equal), sorted by kind, namespace and name:
// kubectl kustomize orders objects as kustomize's legacy sort does.
func normalized(t testing.TB, objs []*unstructured.Unstructured) []any {
	t.Helper()
	sorted := slices.Clone(objs)
	slices.SortFunc(sorted, func(a, b *unstructured.Unstructured) int {
		return strings.Compare(a.GetKind()+"/"+a.GetNamespace()+"/"+a.GetName(), b.GetKind()+"/"+b.GetNamespace()+"/"+b.GetName())
	})
	var out []any
	for _, o := range sorted {
		data, err := o.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}
