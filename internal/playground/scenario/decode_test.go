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

package scenario

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

const node = "nodes: [{name: a}]\n"

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		data string
		// want are substrings of the error; none means valid.
		want []string
	}{
		{name: "valid", data: node + "objects:\n- {kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: i}]}}"},
		{name: "unknown field", data: "nodes: [{name: a, bogus: 1}]", want: []string{"s.yaml: ", `unknown field "nodes[0].bogus"`}},
		{name: "unknown top-level field", data: node + "extra: 1", want: []string{`unknown field "extra"`}},
		{name: "every unknown field, each with the file", data: "nodes: [{name: a, allocatable: {cpu: '1', memroy: 1Gi}}, {name: b, allocatble: {cpu: '1'}}]",
			want: []string{"s.yaml: unknown field \"nodes[0].allocatable.memroy\"; did you mean \"nodes[0].allocatable.memory\"?\n" +
				"s.yaml: unknown field \"nodes[1].allocatble\"; did you mean \"nodes[1].allocatable\"?"}},
		{name: "bad quantity", data: "nodes: [{name: a}, {name: b, allocatable: {pods: ten}}]", want: []string{"s.yaml: nodes[1].allocatable.pods: Invalid value: \"ten\""}},
		{name: "fractional pods", data: "nodes: [{name: a, allocatable: {pods: 1.5}}]", want: []string{"nodes[0].allocatable.pods", "whole number"}},
		{name: "negative cpu", data: "nodes: [{name: a, allocatable: {cpu: -1}}]", want: []string{"nodes[0].allocatable.cpu", "must not be negative"}},
		{name: "cpu beyond int64 millicores", data: "nodes: [{name: a, allocatable: {cpu: 1e100}}]", want: []string{
			`nodes[0].allocatable.cpu: Invalid value: "1e+100": must be at most 9223372036854775807m (the scheduler counts CPU in millicores, as an int64)`}},
		{name: "cpu one millicore beyond", data: "nodes: [{name: a, allocatable: {cpu: 9223372036854775808m}}]", want: []string{"nodes[0].allocatable.cpu", "at most 9223372036854775807m"}},
		{name: "largest cpu", data: "nodes: [{name: a, allocatable: {cpu: 9223372036854775807m}}]"},
		{name: "pods beyond int", data: "nodes: [{name: a, allocatable: {pods: 1e20}}]", want: []string{
			`nodes[0].allocatable.pods: Invalid value: "100000000000000000000": must be at most 9223372036854775807 (the scheduler counts pods as an int)`}},
		{name: "memory beyond int64", data: `nodes: [{name: a, allocatable: {memory: "9223372036854775808"}}]`, want: []string{
			`nodes[0].allocatable.memory: Invalid value: "9223372036854775808": must be at most 9223372036854775807 (the scheduler counts it as an int64)`}},
		{name: "largest memory", data: "nodes: [{name: a, allocatable: {memory: 9223372036854775807}}]"},
		{name: "8Ei parses as the largest memory", data: "nodes: [{name: a, allocatable: {memory: 8Ei}}]"},
		{name: "bound pod request beyond int64", data: node + "boundPods: [{name: p, nodeName: a, containers: [{requests: {cpu: 1e19}}]}]", want: []string{
			`boundPods[0].containers[0].requests[cpu]: Invalid value: "1e+19": must be at most 9223372036854775807m`}},
		{name: "count < 1", data: "nodes: [{name: a, count: 0}]", want: []string{"nodes[0].count: Invalid value: 0: must be at least 1"}},
		{name: "duplicate node names", data: "nodes: [{name: a}, {name: a}]", want: []string{"nodes[1].name: Duplicate value"}},
		{name: "duplicate through count", data: "nodes: [{name: a, count: 2}, {name: a-2}]", want: []string{"nodes[1].name: Duplicate value", `node \"a-2\"`}},
		{name: "no nodes", data: "objects: []", want: []string{"nodes: Required value"}},
		{name: "bad taint", data: "nodes: [{name: a, taints: [{key: k, effect: Never}]}]", want: []string{"nodes[0].taints[0].effect: Unsupported value: \"Never\""}},
		{name: "object without kind", data: node + "objects: [{metadata: {name: p}}]", want: []string{"objects[0].kind: Required value"}},
		{name: "other kind without apiVersion", data: node + "objects: [{kind: ConfigMap, metadata: {name: p}}]", want: []string{"objects[0].apiVersion: Required value", "a ConfigMap is applied as written"}},
		{name: "other kind", data: node + "objects: [{apiVersion: v1, kind: ConfigMap, metadata: {name: p}, data: {a: b}}]"},
		{name: "kind of the table with another apiVersion", data: node + "objects: [{apiVersion: apps/v1beta2, kind: Deployment, metadata: {name: p}}]", want: []string{`objects[0].apiVersion: Unsupported value: "apps/v1beta2"`, `"apps/v1"`}},
		{name: "valid Service", data: node + "objects: [{kind: Service, metadata: {name: web}, spec: {selector: {app: web}, ports: [{port: 80}]}}]"},
		{name: "headless Service without ports", data: node + "objects: [{kind: Service, metadata: {name: web}, spec: {clusterIP: None, selector: {app: web}}}]"},
		{name: "Service without ports", data: node + "objects: [{kind: Service, metadata: {name: web}, spec: {selector: {app: web}}}]", want: []string{"objects[0].spec.ports: Required value"}},
		{name: "Service with a wrong apiVersion", data: node + "objects: [{apiVersion: apps/v1, kind: Service, metadata: {name: web}}]", want: []string{`objects[0].apiVersion: Unsupported value: "apps/v1"`}},
		{name: "unknown Service field", data: node + "objects: [{kind: Service, metadata: {name: web}, spec: {selectr: {app: web}, ports: [{port: 80}]}}]", want: []string{`objects[0]: Invalid value: "Service": unknown field "spec.selectr"; did you mean "spec.selector"?`}},
		{name: "wrong apiVersion", data: node + "objects: [{apiVersion: v1, kind: Deployment, metadata: {name: d}}]", want: []string{"objects[0].apiVersion: Unsupported value: \"v1\""}},
		{name: "unknown object field", data: node + "objects: [{kind: Deployment, metadata: {name: d}, spec: {replica: 3}}]", want: []string{`objects[0]: Invalid value: "Deployment": unknown field "spec.replica"; did you mean "spec.replicas"?`}},
		{name: "object without name", data: node + "objects: [{kind: Pod, spec: {containers: [{name: c, image: i}]}}]", want: []string{"objects[0].metadata.name: Required value"}},
		{name: "pod without containers", data: node + "objects: [{kind: Pod, metadata: {name: p}}]", want: []string{"objects[0].spec.containers: Required value"}},
		{name: "unknown node", data: node + "objects: [{kind: Pod, metadata: {name: p}, spec: {nodeName: b, containers: [{name: c, image: i}]}}]", want: []string{`objects[0].spec.nodeName: Not found: "b"`}},
		{name: "unknown scheduler", data: node + "objects: [{kind: Pod, metadata: {name: p}, spec: {schedulerName: other, containers: [{name: c, image: i}]}}]", want: []string{`objects[0].spec.schedulerName: Unsupported value: "other"`}},
		{name: "negative replicas", data: node + "objects: [{kind: ReplicaSet, metadata: {name: r}, spec: {replicas: -1, template: {spec: {containers: [{name: c, image: i}]}}}}]", want: []string{"objects[0].spec.replicas: Invalid value: -1"}},
		{name: "namespace with a trailing dash", data: node + "objects: [{kind: Pod, metadata: {name: p, namespace: team-}, spec: {containers: [{name: c, image: i}]}}]",
			want: []string{`objects[0].metadata.namespace: Invalid value: "team-": a lowercase RFC 1123 label must consist of`}},
		{name: "namespace with a leading dash", data: node + "objects: [{kind: Service, metadata: {name: s, namespace: -team}, spec: {selector: {app: web}, ports: [{port: 80}]}}]",
			want: []string{`objects[0].metadata.namespace: Invalid value: "-team"`}},
		{name: "namespace with a dot", data: node + "objects: [{kind: Pod, metadata: {name: p, namespace: team.a}, spec: {containers: [{name: c, image: i}]}}]",
			want: []string{`objects[0].metadata.namespace: Invalid value: "team.a"`}},
		{name: "bound pod namespace with a trailing dash", data: node + "boundPods: [{namespace: team-, name: p, nodeName: a}]",
			want: []string{`boundPods[0].namespace: Invalid value: "team-"`}},
		{name: "namespace with inner dashes", data: node + "objects: [{kind: Pod, metadata: {name: p, namespace: team--a}, spec: {containers: [{name: c, image: i}]}}]"},
		{name: "zero replicas", data: node + "objects:\n" +
			"- {kind: ReplicaSet, metadata: {name: r}, spec: {replicas: 0, template: {spec: {containers: [{name: c, image: i}]}}}}\n" +
			"- {kind: Deployment, metadata: {name: d}, spec: {replicas: 0, template: {spec: {containers: [{name: c, image: i}]}}}}\n" +
			"- {kind: StatefulSet, metadata: {name: s}, spec: {replicas: 0, template: {spec: {containers: [{name: c, image: i}]}}}}\n" +
			"- {kind: Job, metadata: {name: j}, spec: {parallelism: 0, template: {spec: {restartPolicy: Never, containers: [{name: c, image: i}]}}}}\n" +
			"steps: [{scale: {kind: Deployment, name: d, replicas: 0}}]"},
		{name: "largest replicas", data: node + "objects: [{kind: ReplicaSet, metadata: {name: r}, spec: {replicas: 10000, template: {spec: {containers: [{name: c, image: i}]}}}}]"},
		{name: "replicas one over", data: node + "objects: [{kind: ReplicaSet, metadata: {name: r}, spec: {replicas: 10001, template: {spec: {containers: [{name: c, image: i}]}}}}]",
			want: []string{"objects[0].spec.replicas: Invalid value: 10001: must be at least 0 and at most 10000"}},
		{name: "zero replicas count no pods", data: node + "objects:\n" +
			"- {kind: ReplicaSet, metadata: {name: r}, spec: {replicas: 10000, template: {spec: {containers: [{name: c, image: i}]}}}}\n" +
			"- {kind: ReplicaSet, metadata: {name: z}, spec: {replicas: 0, template: {spec: {containers: [{name: c, image: i}]}}}}\n"},
		{name: "malformed YAML", data: "nodes: [", want: []string{"s.yaml: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDecodeError(t, tt.data, tt.want)
		})
	}
}

func TestDecodeDefaults(t *testing.T) {
	s, err := decodePlan("s.yaml", []byte(`
nodes:
  - name: node
    count: 2
    labels: {size: big}
    taints: [{key: k, value: v, effect: NoSchedule}]
    allocatable: {cpu: 500m, pods: 10}
  - name: single
objects:
  - kind: Pod
    metadata: {name: p, namespace: team-a}
    spec: {containers: [{name: c, image: i}]}
  - kind: Service
    metadata: {name: web}
    spec:
      selector: {app: web}
      ports: [{port: 80}]
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"node-1", "node-2", "single"}, s.NodeNames); diff != "" {
		t.Errorf("node names (-want +got):\n%s", diff)
	}
	nodes := s.NodeObjects(time.Now())
	got := map[string]string{}
	for _, n := range nodes {
		a := n.Status.Allocatable
		got[n.Name] = a.Cpu().String() + " " + a.Memory().String() + " " + a.Pods().String() + " " + n.Labels["size"]
	}
	want := map[string]string{"node-1": "500m 32Gi 10 big", "node-2": "500m 32Gi 10 big", "single": "8 32Gi 110 "}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]corev1.Taint{{Key: "k", Value: "v", Effect: corev1.TaintEffectNoSchedule}}, nodes[0].Spec.Taints); diff != "" {
		t.Errorf("taints (-want +got):\n%s", diff)
	}
	if nodes[0].Status.Conditions[0].Type != corev1.NodeReady || nodes[0].Status.Capacity.Pods().Cmp(resource.MustParse("10")) != 0 {
		t.Errorf("node status %+v, want ready with capacity = allocatable", nodes[0].Status)
	}
	var pod corev1.Pod
	var svc corev1.Service
	for i, into := range []any{&pod, &svc} {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(s.Objects[i].Object, into); err != nil {
			t.Fatal(err)
		}
	}
	if pod.Namespace != "team-a" || pod.Kind != "Pod" {
		t.Errorf("object %+v, want Pod team-a/p", pod)
	}
	if svc.Namespace != "default" || svc.Kind != "Service" || svc.APIVersion != "v1" || svc.Spec.Selector["app"] != "web" || len(svc.Spec.Ports) != 1 {
		t.Errorf("object %+v, want Service default/web selecting app=web", svc)
	}
	if ptr.Deref(s.Scenario.Nodes[1].Count, 1) != 1 {
		t.Errorf("count defaults to 1")
	}
}

// TestDecodeAnnotations: node annotations decode as strings, as written:
// placeholders are expanded only when the nodes are made.
func TestDecodeAnnotations(t *testing.T) {
	tests := []struct {
		name string
		data string
		want []map[string]string
	}{
		{name: "none", data: "nodes: [{name: a}]", want: []map[string]string{nil}},
		{name: "empty", data: "nodes: [{name: a, annotations: {}}]", want: []map[string]string{{}}},
		{
			name: "block style, placeholders kept",
			data: `
nodes:
  - name: a
    annotations:
      scheduling.adminsched.io/maintenance-window: "${now+1h}/${now+3h},2030-01-01T00:00:00Z/2030-01-01T02:00:00Z"
      example.com/note: plain text
  - name: b
`,
			want: []map[string]string{
				{
					"scheduling.adminsched.io/maintenance-window": "${now+1h}/${now+3h},2030-01-01T00:00:00Z/2030-01-01T02:00:00Z",
					"example.com/note":                            "plain text",
				},
				nil,
			},
		},
		{
			name: "scalars that YAML would type stay strings",
			data: "nodes: [{name: a, annotations: {a: 1, b: true, c: null, d: 2030-01-01T00:00:00Z}}]",
			want: []map[string]string{{"a": "1", "b": "true", "c": "", "d": "2030-01-01T00:00:00Z"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := decodePlan("s.yaml", []byte(tt.data), nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []map[string]string
			for _, n := range s.Scenario.Nodes {
				got = append(got, n.Annotations)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
		})
	}
}

// checkDecodeError decodes data as s.yaml and checks that it succeeds when
// want is empty, and otherwise fails with an error containing every string
// of want.
func checkDecodeError(t *testing.T, data string, want []string) {
	t.Helper()
	_, err := decodePlan("s.yaml", []byte(data), []string{"custom-scheduler"})
	if len(want) == 0 {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("no error, want one containing %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}

// TestNoClient keeps the first step of the pipeline pure, as the package doc
// says: nothing it links, directly or not, is a Kubernetes client, the
// embedded cluster or another part of the playground but the steps' shared
// words (workload).
func TestNoClient(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "k8s.io/client-go/") || strings.HasPrefix(dep, "github.com/adminsched/scheduler-plugins/internal/localcluster") ||
			strings.HasPrefix(dep, "github.com/adminsched/scheduler-plugins/internal/playground/") && dep != "github.com/adminsched/scheduler-plugins/internal/playground/scenario" &&
				dep != "github.com/adminsched/scheduler-plugins/internal/playground/workload" {
			t.Errorf("the scenario package links %s", dep)
		}
	}
}

// planFile is a scenario whose compile defaults something of every kind:
// pods' scheduler names, a workload's template labels and selector, a
// Job's restart policy, a step's apiVersion, a licenses step's from.
const planFile = `nodes: [{name: a}]
licenses: {features: [{name: MATLAB, seats: 4}]}
objects:
- {kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: i}]}}
- {kind: Deployment, metadata: {name: d}, spec: {replicas: 2, template: {spec: {containers: [{name: c, image: i}]}}}}
- {kind: Job, metadata: {name: j}, spec: {template: {spec: {containers: [{name: c, image: i}]}}}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: cm}, data: {a: b}}
steps:
- {scale: {kind: Deployment, name: d, replicas: 3}}
- {licenses: {feature: MATLAB, checkedOutElsewhere: 2}}
`

// schedulerNames are the scheduler names of the pods of plan's workloads,
// in object order.
func schedulerNames(t *testing.T, plan *Plan) []string {
	t.Helper()
	var names []string
	for _, u := range plan.Objects {
		path := []string{"spec", "template", "spec", "schedulerName"}
		if u.GetKind() == "Pod" {
			path = []string{"spec", "schedulerName"}
		}
		if u.GetKind() == "ConfigMap" {
			continue
		}
		name, _, err := unstructured.NestedString(u.Object, path...)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	return names
}

// TestFilePlanPerConfig: a File decoded once plans for several scheduler
// configs, each plan with its own scheduler names, and stays as decoded.
func TestFilePlanPerConfig(t *testing.T) {
	f, err := Decode("s.yaml", []byte(planFile))
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := Decode("s.yaml", []byte(planFile))
	if err != nil {
		t.Fatal(err)
	}
	first, err := f.Plan([]string{"first", "other"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := f.Plan([]string{"second"})
	if err != nil {
		t.Fatal(err)
	}
	none, err := f.Plan(nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"first", "first", "first"}, schedulerNames(t, first)); diff != "" {
		t.Errorf("first plan's scheduler names (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"second", "second", "second"}, schedulerNames(t, second)); diff != "" {
		t.Errorf("second plan's scheduler names (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"", "", ""}, schedulerNames(t, none)); diff != "" {
		t.Errorf("scheduler names without profiles (-want +got):\n%s", diff)
	}
	if first.Objects[3] == second.Objects[3] {
		t.Errorf("two plans share the ConfigMap object")
	}
	if first.Steps[0].Scale.APIVersion != "apps/v1" || *first.Steps[1].Licenses.from != 0 {
		t.Errorf("steps %+v, want the scale's apiVersion and the licenses step's from filled in", first.Steps)
	}
	if !reflect.DeepEqual(f, fresh) {
		t.Errorf("planning changed the File:\n%+v\nwant as decoded:\n%+v", f.Scenario, fresh.Scenario)
	}
}

// TestFilePlanChecksSchedulerNames: a pod's scheduler name is checked
// against the profiles by Plan, not by Decode, naming the field and the
// profiles.
func TestFilePlanChecksSchedulerNames(t *testing.T) {
	data := node + `objects:
- {kind: Pod, metadata: {name: p}, spec: {schedulerName: other, containers: [{name: c, image: i}]}}
- {kind: Deployment, metadata: {name: d}, spec: {template: {spec: {schedulerName: other, containers: [{name: c, image: i}]}}}}
- {kind: Pod, metadata: {name: bound}, spec: {nodeName: a, schedulerName: other, containers: [{name: c, image: i}]}}
`
	f, err := Decode("s.yaml", []byte(data))
	if err != nil {
		t.Fatalf("Decode: %v, want no error: the scheduler names depend on the scheduler config", err)
	}
	if _, err := f.Plan([]string{"other"}); err != nil {
		t.Errorf("Plan with the pods' profile: %v", err)
	}
	_, err = f.Plan([]string{"default-scheduler", "custom"})
	want := `s.yaml: objects[0].spec.schedulerName: Unsupported value: "other": supported values: "default-scheduler", "custom"` + "\n" +
		`s.yaml: objects[1].spec.template.spec.schedulerName: Unsupported value: "other": supported values: "default-scheduler", "custom"`
	if err == nil || err.Error() != want {
		t.Errorf("Plan: %v, want\n%s", err, want)
	}
}

// TestFilePlanBaseErrors: Plan's errors name the file, base or scenario,
// of the object they are about, with its index there.
func TestFilePlanBaseErrors(t *testing.T) {
	pod := "- {kind: Pod, metadata: {name: %s}, spec: {schedulerName: %s, containers: [{name: c, image: i}]}}\n"
	dir := writeScenarios(t, map[string]string{
		"base.yaml": "nodes: [{name: a}]\nobjects:\n" + fmt.Sprintf(pod, "ok", "custom") + fmt.Sprintf(pod, "in-base", "other"),
		"s.yaml":    "base: base.yaml\nobjects:\n" + fmt.Sprintf(pod, "in-scenario", "another"),
	})
	f, err := Load(filepath.Join(dir, "s.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Plan([]string{"custom"})
	want := filepath.Join(dir, "base.yaml") + `: objects[1].spec.schedulerName: Unsupported value: "other": supported values: "custom"` + "\n" +
		filepath.Join(dir, "s.yaml") + `: objects[0].spec.schedulerName: Unsupported value: "another": supported values: "custom"`
	if err == nil || err.Error() != want {
		t.Errorf("Plan: %v, want\n%s", err, want)
	}
	var verr *ValidationError
	if !errors.As(err, &verr) || verr.File != filepath.Join(dir, "base.yaml") {
		t.Errorf("Plan: %#v, want a *ValidationError of the base first", err)
	}
}

// decodePlan decodes data and plans it for schedulerNames.
func decodePlan(file string, data []byte, schedulerNames []string) (*Plan, error) {
	f, err := Decode(file, data)
	if err != nil {
		return nil, err
	}
	return f.Plan(schedulerNames)
}

// loadPlan loads the file at path and plans it for schedulerNames.
func loadPlan(path string, schedulerNames []string) (*Plan, error) {
	f, err := Load(path)
	if err != nil {
		return nil, err
	}
	return f.Plan(schedulerNames)
}
