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
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// TestDeschedulerPolicies holds the shipped policies to what the install
// needs: the chart's copies are the same text; each is a descheduler/v1alpha2
// policy that enables PolicyEvictor at filter and preevictionfilter, reading
// the scheduler's config where the install mounts it; its header names a
// scheduler config of manifests/ that exists.
func TestDeschedulerPolicies(t *testing.T) {
	pairedConfig := regexp.MustCompile(`manifests/[a-z-]+/[a-z-]+-config\.yaml`)
	for _, name := range shippedPolicies {
		t.Run(name, func(t *testing.T) {
			text := readPolicy(t, deschedulerDir, name)
			if chart := readPolicy(t, deschedulerChartFiles, name); chart != text {
				t.Errorf("the chart's files/descheduler/%s-policy.yaml differs from manifests/descheduler's: copy it over", name)
			}
			pair := pairedConfig.FindString(text)
			if _, err := os.Stat("../../" + pair); pair == "" || err != nil {
				t.Errorf("the header names no scheduler config of manifests/ that exists (%q): %v", pair, err)
			}
			policy, profiles := policyProfiles(t, text)
			if policy["apiVersion"] != "descheduler/v1alpha2" || policy["kind"] != "DeschedulerPolicy" {
				t.Errorf("apiVersion %v, kind %v; want descheduler/v1alpha2 DeschedulerPolicy", policy["apiVersion"], policy["kind"])
			}
			for _, p := range profiles {
				p := p.(map[string]any)
				for _, point := range []string{"filter", "preevictionfilter"} {
					enabled, _, _ := unstructured.NestedStringSlice(p, "plugins", point, "enabled")
					if !slices.Contains(enabled, "PolicyEvictor") {
						t.Errorf("profile %v does not enable PolicyEvictor at %s: %v", p["name"], point, enabled)
					}
				}
				if got := pluginArgs(p, "PolicyEvictor")["schedulerConfig"]; got != schedulerConfigMount+"/scheduler-config.yaml" {
					t.Errorf("profile %v: PolicyEvictor's schedulerConfig is %v, want the install's mount %s/scheduler-config.yaml", p["name"], got, schedulerConfigMount)
				}
			}
		})
	}
}

// TestDeschedulerKustomize builds manifests/descheduler as kubectl apply -k
// does: the Deployment runs the spread policy of its generated ConfigMap
// and mounts the ConfigMap of manifests/install, in its namespace, where
// the policy's PolicyEvictor reads the scheduler's config.
func TestDeschedulerKustomize(t *testing.T) {
	in := deschedulerObjects(t, kustomize(t, deschedulerDir))
	if got, want := in.policy(t), readPolicy(t, deschedulerDir, "spread"); got != want {
		t.Errorf("the Deployment runs this policy:\n%s\nwant spread-policy.yaml:\n%s", got, want)
	}
	var schedulerCM *unstructured.Unstructured
	for _, o := range kustomize(t, "../../manifests/install") {
		if o.GetKind() == "ConfigMap" {
			schedulerCM = o
		}
	}
	if schedulerCM == nil {
		t.Fatal("manifests/install has no ConfigMap")
	}
	if got := in.volume(t, schedulerConfigMount); got != schedulerCM.GetName() {
		t.Errorf("the Deployment mounts ConfigMap %q at %s, want the scheduler's %q", got, schedulerConfigMount, schedulerCM.GetName())
	}
	if in.deployment.Namespace != schedulerCM.GetNamespace() {
		t.Errorf("the Deployment is in %q, the scheduler's ConfigMap in %q: a pod mounts only its own namespace's", in.deployment.Namespace, schedulerCM.GetNamespace())
	}
	if _, ok, _ := unstructured.NestedString(schedulerCM.Object, "data", "scheduler-config.yaml"); !ok {
		t.Errorf("the scheduler's ConfigMap has no key scheduler-config.yaml, which the policies read")
	}
	if img := in.deployment.Spec.Template.Spec.Containers[0].Image; !strings.HasPrefix(img, "adminsched/descheduler:") {
		t.Errorf("image %q, want adminsched/descheduler", img)
	}
}

// TestChartDescheduler renders the chart's descheduler: nothing of it by
// default; with descheduler.enabled each shipped policy by name, the same
// text as manifests/descheduler's, and an inline one; the Deployment
// mounts the scheduler's own ConfigMap (or the existing one) where the
// policies read it, and rolls when that config or the policy changes; its
// values reach the pod; a policy name not shipped fails naming the value.
func TestChartDescheduler(t *testing.T) {
	const ns = "adminsched-system"
	on := []string{"--set", "descheduler.enabled=true"}
	t.Run("off by default", func(t *testing.T) {
		for _, o := range renderChart(t, ns) {
			if strings.Contains(o.GetName(), "descheduler") {
				t.Errorf("the default rendering has %s %s", o.GetKind(), o.GetName())
			}
		}
	})
	for _, name := range shippedPolicies {
		t.Run(name, func(t *testing.T) {
			in := deschedulerObjects(t, renderChart(t, ns, append(on, "--set", "descheduler.policy="+name)...))
			if got, want := in.policy(t), readPolicy(t, deschedulerDir, name); got != want {
				t.Errorf("the chart runs this policy:\n%s\nwant manifests/descheduler/%s-policy.yaml:\n%s", got, name, want)
			}
			if got, want := in.volume(t, schedulerConfigMount), chartRelease+"-config"; got != want {
				t.Errorf("the Deployment mounts ConfigMap %q at %s, want the scheduler's %q", got, schedulerConfigMount, want)
			}
			if sa := in.deployment.Spec.Template.Spec.ServiceAccountName; sa != chartRelease+"-descheduler" {
				t.Errorf("the Deployment runs as %q", sa)
			}
		})
	}
	t.Run("inline policy", func(t *testing.T) {
		const inline = `descheduler:
  enabled: true
  policy:
    apiVersion: descheduler/v1alpha2
    kind: DeschedulerPolicy
    profiles:
      - name: failed
        pluginConfig: [{name: RemoveFailedPods}]
        plugins: {deschedule: {enabled: [RemoveFailedPods]}}
`
		in := deschedulerObjects(t, renderChart(t, ns, "-f", valuesFile(t, inline)))
		_, profiles := policyProfiles(t, in.policy(t))
		if len(profiles) != 1 || profiles[0].(map[string]any)["name"] != "failed" {
			t.Errorf("the inline policy came out as %v", profiles)
		}
	})
	t.Run("values", func(t *testing.T) {
		in := deschedulerObjects(t, renderChart(t, ns, append(on,
			"--set", "descheduler.interval=90s", "--set", "descheduler.image.tag=v9",
			"--set", "descheduler.nodeSelector.pool=system", "--set", "descheduler.tolerations[0].operator=Exists",
			"--set", "descheduler.resources.limits.memory=1Gi", "--set", "descheduler.logVerbosity=4")...))
		spec := in.deployment.Spec.Template.Spec
		c := spec.Containers[0]
		for what, ok := range map[string]bool{
			"interval":     in.flag(t, "--descheduling-interval") == "90s",
			"verbosity":    in.flag(t, "--v") == "4",
			"image":        c.Image == "adminsched/descheduler:v9",
			"nodeSelector": spec.NodeSelector["pool"] == "system",
			"tolerations":  len(spec.Tolerations) == 1 && spec.Tolerations[0].Operator == v1.TolerationOpExists,
			"resources":    c.Resources.Limits.Memory().String() == "1Gi",
		} {
			if !ok {
				t.Errorf("descheduler.%s did not reach the Deployment: %+v", what, in.deployment.Spec.Template)
			}
		}
	})
	t.Run("restarts on a new config or policy", func(t *testing.T) {
		annotations := func(args ...string) map[string]string {
			return deschedulerObjects(t, renderChart(t, ns, append(on, args...)...)).deployment.Spec.Template.Annotations
		}
		base := annotations()
		if base["checksum/config"] == "" || base["checksum/policy"] == "" {
			t.Fatalf("the pod template has no checksum annotations: %v", base)
		}
		if got := annotations("--set", "pluginConfig[0].name=NodeLessPods", "--set", "pluginConfig[0].args.mode=MostPods"); got["checksum/config"] == base["checksum/config"] {
			t.Errorf("a new scheduler config keeps checksum/config %s: the descheduler would run the old rules", got["checksum/config"])
		}
		if got := annotations("--set", "descheduler.policy=maintenance"); got["checksum/policy"] == base["checksum/policy"] {
			t.Errorf("a new policy keeps checksum/policy %s", got["checksum/policy"])
		}
		in := deschedulerObjects(t, renderChart(t, ns, append(on, "--set", "config.existingConfigMap=mine")...))
		if got := in.volume(t, schedulerConfigMount); got != "mine" {
			t.Errorf("with config.existingConfigMap=mine the Deployment mounts %q", got)
		}
	})
	checkBadValues(t, []badValues{
		{"a policy not shipped", append(on, "--set", "descheduler.policy=rebalance"), []string{"/descheduler/policy", "spread"}},
		// The template's own check, behind the schema's.
		{"a policy not shipped, past the schema", append(on, "--skip-schema-validation", "--set", "descheduler.policy=rebalance"),
			[]string{`descheduler.policy: "rebalance" is no shipped policy`}},
		{"an inline policy of another version", append(on, "--set-json", `descheduler.policy={"apiVersion":"descheduler/v1alpha1","kind":"DeschedulerPolicy","profiles":[{}]}`),
			[]string{"/descheduler/policy"}},
		{"an unknown descheduler value", append(on, "--set", "descheduler.replicas=2"), []string{"replicas"}},
	})
}

// TestDeschedulerInstallRBAC applies the descheduler's ServiceAccount and
// RBAC, from manifests/descheduler and from the chart, to the API server,
// and runs bin/descheduler as their Deployment does (its flags, the
// policy it mounts, $(POD_NAMESPACE)) with the ServiceAccount's own token,
// every 2s instead of 5m:
//   - it takes its Lease and runs cycles that evict a pod: the kustomization
//     its spread policy, from a node with 6 pods to an empty one; the
//     chart its maintenance policy, from a node tainted for its window;
//   - it is refused nothing ("forbidden" in its log);
//   - calls outside its rules (pods delete above all) are forbidden;
//   - the chart and the kustomization grant it the same.
//
// PolicyEvictor reads manifests/maintenancewindow/scheduler-config.yaml:
// it needs a profile that runs MaintenanceWindow or PlacementPolicy.
func TestDeschedulerInstallRBAC(t *testing.T) {
	const sourceNS = "adminsched-system"
	chartArgs := []string{"--set", "descheduler.enabled=true", "--set", "descheduler.policy=maintenance"}
	chartSA := chartRelease + "-descheduler"
	t.Run("chart and kustomize grant the same", func(t *testing.T) {
		rename := map[string]string{sourceNS: "<namespace>"}
		want := grantsOf(t, kustomize(t, deschedulerDir), sourceNS, "descheduler", rename)
		got := grantsOf(t, renderChart(t, sourceNS, chartArgs...), sourceNS, chartSA, rename)
		if len(want) == 0 {
			t.Fatal("the kustomization grants its ServiceAccount nothing")
		}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(scopedPermission{}, permission{})); diff != "" {
			t.Errorf("the chart's grants differ from manifests/descheduler's (-kustomize +chart):\n%s", diff)
		}
		for _, p := range want {
			if strings.Contains(p.String(), "*") || p.String() == "cluster: delete pods" {
				t.Errorf("the descheduler is granted %s", p)
			}
		}
	})
	for _, tt := range []struct {
		source, sa, scenario string
		objs                 func(ns string) []*unstructured.Unstructured
	}{
		{"kustomize", "descheduler", "spread", func(ns string) []*unstructured.Unstructured {
			return inNamespace(kustomize(t, deschedulerDir), sourceNS, ns)
		}},
		{"chart", chartSA, "maintenance", func(ns string) []*unstructured.Unstructured { return renderChart(t, ns, chartArgs...) }},
	} {
		t.Run(tt.source, func(t *testing.T) {
			bin := deschedulerBinary(t)
			tc := newTestContext(t)
			in := deschedulerObjects(t, tt.objs(tc.ns))
			if sa := in.deployment.Spec.Template.Spec.ServiceAccountName; sa != tt.sa {
				t.Errorf("the Deployment runs as %q, want %q", sa, tt.sa)
			}
			tc.apply(in.rbac)
			tc.checkDeschedulerRun(bin, in, tt.sa, tt.scenario)
		})
	}
}

// checkDeschedulerRun runs the descheduler as in's Deployment does, as
// ServiceAccount sa of the test's namespace, on the pods of scenario (see
// TestDeschedulerInstallRBAC).
func (tc *testContext) checkDeschedulerRun(bin string, in *deschedulerInstall, sa, scenario string) {
	t := tc.t
	t.Helper()
	schedulerConfig := tc.writeFile("scheduler-config.yaml", readFile(t, "../../manifests/maintenancewindow/scheduler-config.yaml"))
	policyPath := tc.writeFile("policy.yaml", forTest(t, in.policy(t), schedulerConfig, tc.ns))
	kubeconfig := tc.serviceAccountKubeconfig(tc.ns, sa)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	c := in.deployment.Spec.Template.Spec.Containers[0]
	var args []string
	for _, a := range append(c.Command[1:], c.Args...) {
		switch flag, _, _ := strings.Cut(a, "="); flag {
		case "--policy-config-file":
			a = flag + "=" + policyPath
		case "--descheduling-interval":
			a = flag + "=2s"
		}
		args = append(args, strings.ReplaceAll(a, "$(POD_NAMESPACE)", tc.ns))
	}
	args = append(args, "--kubeconfig="+kubeconfig, "--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port))

	nodes := tc.createNodes(makeNode(tc.ns+"-a"), makeNode(tc.ns+"-b"))
	replicas := 6
	if scenario == "maintenance" {
		replicas = 1
		taint := v1.Taint{Key: "scheduling.adminsched.io/maintenance-window", Effect: v1.TaintEffectNoSchedule}
		patch := fmt.Sprintf(`{"spec":{"taints":[{"key":%q,"effect":%q}]}}`, taint.Key, taint.Effect)
		if _, err := adminClient.CoreV1().Nodes().Patch(tc.ctx, nodes[0], types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Bound to the first node by the template: no scheduler runs, and a
	// replacement goes back there.
	pods := tc.createReplicaSetPods("web", replicas, func(p *v1.PodTemplateSpec) {
		p.Labels[deschedulerTestLabel] = tc.ns
		p.Spec.NodeName = nodes[0]
	})
	proc := tc.start("descheduler", exec.Command(bin, args...))

	evicted := func(ctx context.Context) (bool, error) {
		if proc.Exited() {
			return false, fmt.Errorf("it exited")
		}
		for _, name := range pods {
			p, err := adminClient.CoreV1().Pods(tc.ns).Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) || (err == nil && p.DeletionTimestamp != nil) {
				return true, nil
			}
		}
		return false, nil
	}
	if err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, evicted); err != nil {
		var hint string
		if proc.Exited() && strings.Contains(proc.Output(), "PolicyEvictor") {
			hint = " (if " + bin + " lacks the PolicyEvictor plugin, rebuild it with `make descheduler`)"
		}
		t.Fatalf("the descheduler evicted none of %v: %v%s\n%s", pods, err, hint, proc.Output())
	}
	cycles := func(context.Context) (bool, error) {
		return proc.Exited() || strings.Count(proc.Output(), "Number of evictions/requests") >= 2, nil
	}
	if err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, cycles); err != nil || proc.Exited() {
		t.Errorf("the descheduler did not run two cycles: %v\n%s", err, proc.Output())
	}
	lease, err := adminClient.CoordinationV1().Leases(tc.ns).Get(tc.ctx, "descheduler", metav1.GetOptions{})
	if err != nil || ptr.Deref(lease.Spec.HolderIdentity, "") == "" {
		t.Errorf("the descheduler holds no Lease %s/descheduler: %v", tc.ns, err)
	}
	if lines := forbidden.FindAllString(proc.Output(), -1); len(lines) > 0 {
		t.Errorf("the descheduler running as its ServiceAccount was refused %d times (first: %q): the RBAC misses something\n%s", len(lines), lines[0], proc.Output())
	}
	tc.checkForbidden("the descheduler's ServiceAccount", kubeconfig, deschedulerRefused)
}

// deschedulerRefused: what the descheduler's rules do not grant.
var deschedulerRefused = map[string]forbiddenCall{
	// It evicts, so that PodDisruptionBudgets hold.
	"delete a pod": func(ctx context.Context, c kubernetes.Interface, ns string) error {
		return c.CoreV1().Pods(ns).Delete(ctx, "any-pod", metav1.DeleteOptions{})
	},
	"list secrets": onDemandShareControllerRefused["list secrets"],
	"cordon a node": func(ctx context.Context, c kubernetes.Interface, _ string) error {
		_, err := c.CoreV1().Nodes().Patch(ctx, "any-node", types.MergePatchType, []byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{})
		return err
	},
	"create a pod":        onDemandShareControllerRefused["create a pod"],
	"delete a Deployment": onDemandShareControllerRefused["delete a Deployment"],
	"get another Lease":   onDemandShareControllerRefused["get another Lease"],
	"read the ConfigMaps": func(ctx context.Context, c kubernetes.Interface, ns string) error {
		_, err := c.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		return err
	},
}

// readFile returns the content of path.
func readFile(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
