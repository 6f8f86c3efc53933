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
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
	"github.com/adminsched/scheduler-plugins/test/integration/framework"
)

// TestChartTwoReleases installs two releases of the chart in one namespace
// that differ only in schedulerName, runs each release's scheduler as its
// Deployment would (its ServiceAccount's token, its ConfigMap's config),
// and checks that each holds a lease of its own and schedules its pods.
// With chart 0.37.0 both took the lease custom-scheduler and the second
// never scheduled.
func TestChartTwoReleases(t *testing.T) {
	tc := newTestContext(t)
	releases := []string{"team-a", "team-b"}
	oldLeases := map[string]bool{}
	for _, release := range releases {
		old := rendered{objs: renderRelease(t, release, previousChart, tc.ns, "--set", "schedulerName="+release+"-scheduler")}
		oldLeases[old.config(t).LeaderElection.ResourceName] = true
	}
	if len(oldLeases) != 1 {
		t.Errorf("chart 0.37.0 gave the two releases the leases %v: this test no longer shows the shared lease it guards against", oldLeases)
	}

	tc.createNodes(makeNode("releases-a"), makeNode("releases-b"))
	procs := map[string]*framework.Process{}
	for _, release := range releases {
		in := tc.installObjects("release "+release, renderRelease(t, release, chartDir, tc.ns, "--set", "schedulerName="+release+"-scheduler"))
		args, _ := tc.schedulerArgs(in, in.config)
		procs[release] = tc.runBinary(release+"-scheduler", args...)
	}
	for _, release := range releases {
		tc.waitForLeader([]*framework.Process{procs[release]})
	}
	for _, release := range releases {
		lease, err := adminClient.CoordinationV1().Leases(tc.ns).Get(tc.ctx, release+"-adminsched-scheduler", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("release %s's lease: %v", release, err)
		}
		if ptr.Deref(lease.Spec.HolderIdentity, "") == "" {
			t.Errorf("release %s's lease %s has no holder", release, lease.Name)
		}
		pod := tc.makePod(release + "-pod")
		pod.Spec.SchedulerName = release + "-scheduler"
		tc.createPod(pod)
	}
	tc.waitScheduled("team-a-pod", "team-b-pod")
	for _, release := range releases {
		if bound := tc.waitBoundInLog(procs[release], 1); !slices.Equal(bound, []string{tc.ns + "/" + release + "-pod"}) {
			t.Errorf("release %s's scheduler bound %q, want its own pod only", release, bound)
		}
	}
}

// helmOnCluster runs a helm command against the embedded API server in
// namespace and returns its stdout.
func helmOnCluster(t *testing.T, namespace string, args ...string) string {
	t.Helper()
	out, err := runHelm(t, append(args, "--namespace", namespace, "--kubeconfig", adminKubeconfig)...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// liveInstallation reads a release's ConfigMap and Deployment back from the
// API server, as they are after helm install or upgrade, and prepares to run
// the scheduler with them as installObjects does with rendered objects.
func (tc *testContext) liveInstallation(source, fullname string) *installation {
	tc.t.Helper()
	cm, err := adminClient.CoreV1().ConfigMaps(tc.ns).Get(tc.ctx, fullname+"-config", metav1.GetOptions{})
	if err != nil {
		tc.t.Fatal(err)
	}
	d, err := adminClient.AppsV1().Deployments(tc.ns).Get(tc.ctx, fullname, metav1.GetOptions{})
	if err != nil {
		tc.t.Fatal(err)
	}
	in := &installation{}
	for kind, obj := range map[string]runtime.Object{"ConfigMap": cm, "Deployment": d} {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			tc.t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: m}
		u.SetKind(kind)
		in.objs = append(in.objs, u)
	}
	in.readObjects(tc.t, source)
	in.kubeconfig = tc.serviceAccountKubeconfig(in.namespace, in.serviceAccount)
	in.config.ClientConnection.Kubeconfig = in.kubeconfig
	return in
}

// TestChartUpgrade installs chart 0.37.0 with its default values, upgrades
// the release to the working tree's chart with the same values, and checks
// on the API server that the config and the lease Role are the new chart's,
// that the scheduler run as the upgraded Deployment takes the new lease and
// schedules a pod, that the 0.37.0 scheduler running before the upgrade
// stops leading, and that the NOTES' lease command prints the new holder.
func TestChartUpgrade(t *testing.T) {
	if kubeversion.Minor < 37 {
		// helm install refuses a cluster outside the chart's kubeVersion.
		t.Skipf("chart 0.37.0 requires kubeVersion >=1.37.0; this build's cluster is %s", kubeversion.String())
	}
	skipUnlessChartFits(t)
	tc := newTestContext(t)
	const release = "upgrade"
	const fullname = release + "-adminsched-scheduler"
	helmOnCluster(t, tc.ns, "install", release, previousChart)
	t.Cleanup(func() {
		// Its cluster-scoped objects outlive the namespace otherwise.
		if _, err := runHelm(t, "uninstall", release, "--namespace", tc.ns, "--kubeconfig", adminKubeconfig); err != nil {
			t.Error(err)
		}
	})
	tc.createNodes(makeNode("upgrade-a"), makeNode("upgrade-b"))
	old := tc.liveInstallation("chart 0.37.0", fullname)
	if le := old.config.LeaderElection; le.ResourceName != "custom-scheduler" {
		t.Errorf("chart 0.37.0 installed the lease %s, want custom-scheduler", le.ResourceName)
	}
	oldArgs, _ := tc.schedulerArgs(old, old.config)
	oldProc := tc.runBinary("scheduler-0.37.0", oldArgs...)
	tc.waitForLeader([]*framework.Process{oldProc})

	notes := helmOnCluster(t, tc.ns, "upgrade", release, chartDir)
	// The new Role grants nothing on the old lease: the old leader cannot
	// renew it and exits, as README.md's upgrade notes say.
	if err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(context.Context) (bool, error) {
		return oldProc.Exited(), nil
	}); err != nil || !strings.Contains(oldProc.Output(), "Leaderelection lost") {
		t.Errorf("the 0.37.0 scheduler did not stop leading after the upgrade (exited: %v)", oldProc.Exited())
	}
	if !strings.Contains(helmOnCluster(t, tc.ns, "status", release), "REVISION: 2") {
		t.Errorf("helm status after the upgrade is not revision 2")
	}
	want := rendered{objs: renderRelease(t, release, chartDir, tc.ns)}
	cm, err := adminClient.CoreV1().ConfigMaps(tc.ns).Get(tc.ctx, fullname+"-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.configText(t), cm.Data["scheduler-config.yaml"]); diff != "" {
		t.Errorf("the upgraded ConfigMap is not the new chart's (-rendered, +live):\n%s", diff)
	}
	role, err := adminClient.RbacV1().Roles(tc.ns).Get(tc.ctx, fullname+"-leader-election", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if names, _ := want.leaseRole(t); !cmp.Equal(role.Rules[0].ResourceNames, names) || !slices.Equal(names, []string{fullname}) {
		t.Errorf("the upgraded lease Role grants %q, want %q", role.Rules[0].ResourceNames, []string{fullname})
	}

	in := tc.liveInstallation("the upgraded release", fullname)
	args, _ := tc.schedulerArgs(in, in.config)
	proc := tc.runBinary("upgraded-scheduler", args...)
	tc.waitForLeader([]*framework.Process{proc})
	tc.createPod(tc.makePod("after-upgrade"))
	tc.waitScheduled("after-upgrade")
	if lines := forbidden.FindAllString(proc.Output(), -1); len(lines) > 0 {
		t.Errorf("the upgraded scheduler was refused %d times (first: %q)", len(lines), lines[0])
	}

	lease, err := adminClient.CoordinationV1().Leases(tc.ns).Get(tc.ctx, fullname, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the new lease: %v", err)
	}
	holder := ptr.Deref(lease.Spec.HolderIdentity, "")
	if got := runNotesCommand(t, notes, "get lease"); got != holder {
		t.Errorf("the NOTES' lease command printed %q, the lease's holder is %q", got, holder)
	}
}

// runNotesCommand runs the kubectl command line of the NOTES that contains
// match, with the admin's kubeconfig, and returns its trimmed output.
func runNotesCommand(t *testing.T, notes, match string) string {
	t.Helper()
	kubectl := toolBinary(t, "KUBECTL", "kubectl", "this test runs the NOTES' kubectl commands")
	var line string
	for _, l := range strings.Split(notes, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "kubectl ") && strings.Contains(l, match) {
			line = l
			break
		}
	}
	if line == "" {
		t.Fatalf("the NOTES have no kubectl command with %q:\n%s", match, notes)
	}
	// The line is for a shell: run it in one, with kubectl on PATH.
	cmd := exec.Command("bash", "-c", line)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+adminKubeconfig, "PATH="+filepath.Dir(kubectl)+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	return strings.TrimSpace(string(out))
}

// chartMinKubeVersion finds the lowest minor of the working tree's chart's
// kubeVersion (">=1.37.0-0 <1.39.0-0"; hack/release-minor sets it).
var chartMinKubeVersion = regexp.MustCompile(`(?m)^kubeVersion:\s*"?>=\s*1\.(\d+)\.`)

// skipUnlessChartFits skips the test when helm install would refuse this
// build's cluster: the working tree's chart is for the newest minor and
// declares so in its kubeVersion, which a release of an older minor
// rewrites.
func skipUnlessChartFits(t *testing.T) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(chartDir, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m := chartMinKubeVersion.FindSubmatch(data)
	if m == nil {
		t.Fatalf("%s/Chart.yaml has no kubeVersion >=1.<minor>", chartDir)
	}
	if lowest, _ := strconv.Atoi(string(m[1])); kubeversion.Minor < lowest {
		t.Skipf("the chart requires kubeVersion >=1.%d, so helm install refuses this build's %s cluster", lowest, kubeversion.String())
	}
}

// notesRelease is the release of the NOTES tests: a name no other test
// applies, since helm install --dry-run refuses objects that exist without
// its ownership annotations (cluster-scoped ones outlive a test's
// namespace).
const notesRelease = "notes"

// helmNotes renders the NOTES of an install of the working tree's chart
// as notesRelease with args: helm install --dry-run against the API server
// (helm template renders no NOTES, and helm 3's client-only dry run still
// asks the cluster for its version and existing objects).
func helmNotes(t *testing.T, namespace string, args ...string) string {
	t.Helper()
	skipUnlessChartFits(t)
	out := helmOnCluster(t, namespace, append([]string{"install", notesRelease, chartDir, "--dry-run=client"}, args...)...)
	_, notes, ok := strings.Cut(out, "\nNOTES:\n")
	if !ok {
		t.Fatalf("helm install --dry-run printed no NOTES:\n%s", out)
	}
	return notes
}

// TestChartNotes checks what the NOTES tell: installed, not running; how to
// wait for the rollout; each profile's schedulerName and plugins; the lease
// holder and logs commands; the schedulerName line of a pod spec.
func TestChartNotes(t *testing.T) {
	const ns = "adminsched-system"
	raw := `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {resourceName: raw-lease, resourceNamespace: leases}
profiles:
  - schedulerName: raw-scheduler
    plugins: {filter: {enabled: [{name: PlacementPolicy}]}}
`
	for _, tt := range []struct {
		name       string
		args       []string
		want, deny []string
	}{
		{"defaults", nil, []string{
			"Release notes is installed in namespace adminsched-system: the Deployment notes-adminsched-scheduler",
			"Installed is not running",
			"kubectl -n adminsched-system rollout status deploy/notes-adminsched-scheduler",
			"custom-scheduler: multiPoint: +NodeLessPods (weight 3)",
			`kubectl -n adminsched-system get lease notes-adminsched-scheduler -o jsonpath='{.spec.holderIdentity}{"\n"}'`,
			`kubectl -n adminsched-system logs "$(kubectl -n adminsched-system get lease notes-adminsched-scheduler -o jsonpath='{.spec.holderIdentity}' | cut -d_ -f1)"`,
			"kubectl -n adminsched-system logs -l app.kubernetes.io/instance=notes,app.kubernetes.io/name=adminsched-scheduler --prefix --tail=100",
			"schedulerName: custom-scheduler",
		}, []string{" runs "}},
		{"two profiles", []string{"--set-json", `profiles=[` +
			`{"schedulerName":"spread-scheduler","plugins":{"multiPoint":{"enabled":[{"name":"NodeLessPods","weight":3}]}}},` +
			`{"schedulerName":"pack-scheduler","plugins":{"score":{"enabled":[{"name":"NodeLessPods"}],"disabled":[{"name":"NodeResourcesBalancedAllocation"}]},"reserve":{"enabled":[{"name":"NodeLessPods"}]}}},` +
			`{"schedulerName":"plain-scheduler"}]`}, []string{
			"spread-scheduler: multiPoint: +NodeLessPods (weight 3)",
			"pack-scheduler: reserve: +NodeLessPods; score: +NodeLessPods, -NodeResourcesBalancedAllocation",
			"plain-scheduler: no change",
			"schedulerName: spread-scheduler",
		}, []string{"custom-scheduler"}},
		{"a raw config", []string{"--set-json", "config.raw=" + strconv.Quote(raw)}, []string{
			"raw-scheduler: filter: +PlacementPolicy",
			"kubectl -n leases get lease raw-lease",
			"schedulerName: raw-scheduler",
		}, []string{"custom-scheduler"}},
		{"an existing ConfigMap", []string{"--set", "config.existingConfigMap=my-config"}, []string{
			"the ConfigMap my-config",
			"kubectl -n adminsched-system get lease notes-adminsched-scheduler",
		}, []string{"custom-scheduler"}},
		{"the license driver", []string{"--set", "licenseDriver.enabled=true"}, []string{
			"The license driver (licenses.adminsched.io) is installed in adminsched-system",
		}, []string{" runs "}},
		{"one replica without leader election", []string{"--set", "replicas=1", "--set", "leaderElection.leaderElect=false"}, []string{
			"(1 replica of adminsched/kube-scheduler:v0.37.0)",
			"Leader election is off",
			"--prefix --tail=100",
		}, []string{"get lease", "holds the lease"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			notes := helmNotes(t, ns, tt.args...)
			for _, w := range tt.want {
				if !strings.Contains(notes, w) {
					t.Errorf("the NOTES lack %q:\n%s", w, notes)
				}
			}
			for _, d := range tt.deny {
				if strings.Contains(notes, d) {
					t.Errorf("the NOTES say %q:\n%s", d, notes)
				}
			}
		})
	}
}

// TestChartProfilesSchedule installs the README's two-profiles example (the
// YAML block that starts with "# two-profiles.yaml") and runs its
// scheduler: both profiles load in the real binary, one lease serves both,
// and each schedules the pods that name it.
func TestChartProfilesSchedule(t *testing.T) {
	tc := newTestContext(t)
	in := tc.installObjects("the README's two profiles", renderChart(t, tc.ns, "-f", valuesFile(t, readmeBlock(t, "```yaml\n# two-profiles.yaml\n"))))
	tc.createNodes(makeNode("profiles-a"), makeNode("profiles-b"))
	args, _ := tc.schedulerArgs(in, in.config)
	proc := tc.runBinary("two-profiles-scheduler", args...)
	tc.waitForLeader([]*framework.Process{proc})
	var pods []string
	for _, p := range in.config.Profiles {
		pod := tc.makePod(ptr.Deref(p.SchedulerName, "") + "-pod")
		pod.Spec.SchedulerName = ptr.Deref(p.SchedulerName, "")
		tc.createPod(pod)
		pods = append(pods, pod.Name)
	}
	if want := []string{"spread-scheduler-pod", "pack-scheduler-pod"}; !slices.Equal(pods, want) {
		t.Errorf("the example's profiles make the pods %q, want %q", pods, want)
	}
	tc.waitScheduled(pods...)
}

// readmeBlock returns the text of the chart README's code block that
// starts with start (its opening fence and first lines) up to its closing
// fence.
func readmeBlock(t *testing.T, start string) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(chartDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), start)
	block, _, closed := strings.Cut(block, "```")
	if !ok || !closed {
		t.Fatalf("the chart's README has no code block starting with %q", start)
	}
	return start[strings.Index(start, "\n")+1:] + block
}

// TestChartNotesREADME holds the NOTES excerpt of the chart README's
// two-profiles example to the NOTES that example renders.
func TestChartNotesREADME(t *testing.T) {
	example := readmeBlock(t, "```yaml\n# two-profiles.yaml\n")
	excerpt := readmeBlock(t, "```\nProfiles (pods choose one")
	notes := helmNotes(t, "adminsched-system", "-f", valuesFile(t, example))
	if !strings.Contains(notes, excerpt) {
		t.Errorf("the README's NOTES excerpt:\n%s\nis not in the NOTES the example renders:\n%s", excerpt, notes)
	}
}
