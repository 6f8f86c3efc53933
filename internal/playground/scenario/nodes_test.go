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
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// rs is a ReplicaSet object with the given replicas, for the size cases.
func rs(name string, replicas int64) string {
	return fmt.Sprintf("{kind: ReplicaSet, metadata: {name: %s}, spec: {replicas: %d, template: {spec: {containers: [{name: c, image: i}]}}}}", name, replicas)
}

func pods(n int) string {
	objs := make([]string, n)
	for i := range objs {
		objs[i] = fmt.Sprintf("{kind: Pod, metadata: {name: p%d}, spec: {containers: [{name: c, image: i}]}}", i)
	}
	return strings.Join(objs, ", ")
}

// TestDecodeSizeLimits: node counts and replicas are capped, per field and
// in total, with the field's path and the allowed range in the error.
func TestDecodeSizeLimits(t *testing.T) {
	tests := []struct {
		name string
		data string
		// want are substrings of the error; none means valid.
		want []string
	}{
		{name: "count at the limit", data: "nodes: [{name: a, count: 10000}]"},
		{
			name: "count over the limit",
			data: "nodes: [{name: a, count: 10001}]",
			want: []string{"s.yaml: nodes[0].count: Invalid value: 10001: must be at least 1 and at most 10000"},
		},
		{
			// The scenario of the report: it made the playground allocate
			// 16 TiB for the node names and die with "out of memory".
			name: "count of 2^40",
			data: "nodes: [{name: a, count: 1099511627776}]",
			want: []string{"s.yaml: nodes[0].count: Invalid value: 1099511627776: must be at least 1 and at most 10000"},
		},
		{
			name: "count of 2^40 and a pod bound to one of its nodes",
			data: "nodes: [{name: a, count: 1099511627776}]\nobjects: [{kind: Pod, metadata: {name: p}, spec: {nodeName: a-1, containers: [{name: c, image: i}]}}]",
			want: []string{"nodes[0].count: Invalid value: 1099511627776"},
		},
		{
			name: "nodes in total over the limit",
			data: "nodes: [{name: a, count: 6000}, {name: b, count: 4000}, {name: c}]",
			want: []string{"s.yaml: nodes: Invalid value: 10001: nodes in total (the sum of every count): must be at most 10000"},
		},
		{name: "replicas at the limit", data: node + "objects: [" + rs("r", 10000) + "]"},
		{
			name: "replicas over the limit",
			data: node + "objects: [" + rs("r", 10001) + "]",
			want: []string{"s.yaml: objects[0].spec.replicas: Invalid value: 10001: must be at least 0 and at most 10000"},
		},
		{
			name: "deployment replicas of 2^31-1",
			data: node + "objects: [{kind: Deployment, metadata: {name: d}, spec: {replicas: 2147483647, template: {spec: {containers: [{name: c, image: i}]}}}}]",
			want: []string{"objects[0].spec.replicas: Invalid value: 2147483647: must be at least 0 and at most 10000"},
		},
		{
			name: "pods in total over the limit",
			data: node + "objects: [" + rs("r", 6000) + ", " + rs("s", 3999) + ", " + pods(2) + "]",
			want: []string{"s.yaml: objects: Invalid value: 10001: pods in total (one per Pod, spec.replicas per ReplicaSet, Deployment and StatefulSet, completions or parallelism per Job, the node count per DaemonSet): must be at most 10000"},
		},
		{name: "pods in total at the limit", data: node + "objects: [" + rs("r", 6000) + ", " + rs("s", 3999) + ", " + pods(1) + "]"},
		{
			// 10,000 nodes with a 2 KiB annotation each: 20 MB on the API server.
			name: "node annotations in total over the limit",
			data: "nodes: [{name: a, count: 10000, annotations: {k: " + strings.Repeat("x", 2047) + "}}]",
			want: []string{"s.yaml: nodes: Invalid value: 20480000: bytes of node annotations in total (keys and values times each count): must be at most 16777216"},
		},
		{name: "node annotations in total under the limit", data: "nodes: [{name: a, count: 1000, annotations: {k: " + strings.Repeat("x", 2047) + "}}]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDecodeError(t, tt.data, tt.want)
		})
	}
}

// TestDecodeRejectsBeforeExpanding: a count over the limit is rejected
// before the node names are expanded, so the rejection costs no memory in
// proportion to the count.
func TestDecodeRejectsBeforeExpanding(t *testing.T) {
	// 200,000 node names cost some 20 MB to expand and check for
	// duplicates; the rejection must cost a few kilobytes.
	data := []byte("nodes: [{name: a, count: 200000}]\nobjects: [{kind: Pod, metadata: {name: p}, spec: {nodeName: a-7, containers: [{name: c, image: i}]}}]")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := decodePlan("s.yaml", data, nil)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "nodes[0].count") {
		t.Errorf("error %v, want one for nodes[0].count", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Errorf("decoding allocated %d bytes, want under 1 MiB: the nodes were expanded before the count was checked", got)
	}
}

// TestDecodeAnnotationErrors: annotation keys and sizes are checked as the
// API server checks them, the size with the placeholders expanded, and every
// placeholder must be well formed; errors name the file and the field.
func TestDecodeAnnotationErrors(t *testing.T) {
	const limit = 256 * 1024 // the API server's total for keys and values
	annotated := func(annotations string) string {
		return "nodes: [{name: a}, {name: b, count: 2, annotations: {" + annotations + "}}]"
	}
	tests := []struct {
		name string
		data string
		// want are substrings of the error; none means valid.
		want []string
	}{
		{name: "valid", data: annotated(`scheduling.adminsched.io/maintenance-window: "${now+1h}/${now+3h},2030-01-01T00:00:00Z/2030-01-01T01:00:00Z"`)},
		{name: "every placeholder form", data: annotated(`k: "${now} ${now+2h} ${now-30m} ${now+1h30m} ${now+1.5h} ${now-0s}"`)},
		{name: "key without prefix, upper case", data: annotated(`Note: x`)},
		{name: "dollar without brace", data: annotated(`k: "costs $5 {not a placeholder}"`)},
		{
			name: "key with a space",
			data: annotated(`"bad key": v`),
			want: []string{`s.yaml: nodes[1].annotations: Invalid value: "bad key": name part must consist of alphanumeric characters`},
		},
		{
			name: "key with two slashes",
			data: annotated(`a/b/c: v`),
			want: []string{`s.yaml: nodes[1].annotations: Invalid value: "a/b/c"`},
		},
		{
			name: "empty key",
			data: annotated(`"": v`),
			want: []string{`s.yaml: nodes[1].annotations: Invalid value: ""`},
		},
		{
			name: "duration that does not parse",
			data: annotated(`scheduling.adminsched.io/maintenance-window: "${now}/${now+banana}"`),
			want: []string{`s.yaml: nodes[1].annotations[scheduling.adminsched.io/maintenance-window]: Invalid value: "${now}/${now+banana}": malformed placeholder "${now+banana}": time: invalid duration "banana"`},
		},
		{
			name: "not now",
			data: annotated(`k: "${tomorrow}"`),
			want: []string{`s.yaml: nodes[1].annotations[k]: Invalid value: "${tomorrow}": malformed placeholder "${tomorrow}": want ${now}, ${now+DURATION} or ${now-DURATION}`},
		},
		{name: "empty placeholder", data: annotated(`k: "${}"`), want: []string{`nodes[1].annotations[k]`, `malformed placeholder "${}"`}},
		{name: "no sign", data: annotated(`k: "${now2h}"`), want: []string{`nodes[1].annotations[k]`, `malformed placeholder "${now2h}"`}},
		{name: "sign without duration", data: annotated(`k: "${now+}"`), want: []string{`nodes[1].annotations[k]`, `malformed placeholder "${now+}": want a duration without a sign after "now+"`}},
		{name: "two signs", data: annotated(`k: "${now+-2h}"`), want: []string{`nodes[1].annotations[k]`, `malformed placeholder "${now+-2h}"`}},
		{name: "days are no Go duration", data: annotated(`k: "${now+1d}"`), want: []string{`nodes[1].annotations[k]`, `time: unknown unit "d"`}},
		{name: "spaces", data: annotated(`k: "${ now }"`), want: []string{`nodes[1].annotations[k]`, `malformed placeholder "${ now }"`}},
		{name: "not closed", data: annotated(`k: "${now+2h/${now+3h}"`), want: []string{`nodes[1].annotations[k]`, `malformed placeholder "${now+2h/${now+3h}"`}},
		{name: "never closed", data: annotated(`k: "x/${now+2h"`), want: []string{`nodes[1].annotations[k]`, `placeholder "${now+2h" has no closing "}"`}},
		{
			name: "two bad values, in key order",
			data: annotated(`b: "${later}", a: "${now+x}"`),
			want: []string{"s.yaml: nodes[1].annotations[a]: Invalid value: \"${now+x}\"", "\ns.yaml: nodes[1].annotations[b]: Invalid value: \"${later}\""},
		},
		{name: "size at the limit", data: annotated("k: " + strings.Repeat("x", limit-1))},
		{
			name: "size over the limit",
			data: annotated("k: " + strings.Repeat("x", limit)),
			want: []string{"s.yaml: nodes[1].annotations: Too long: may not be more than 262144 bytes"},
		},
		{
			// ${now} (6 bytes) becomes 2006-01-02T15:04:05Z (20 bytes).
			name: "size at the limit once expanded",
			data: annotated(`k: "` + strings.Repeat("x", limit-1-20) + `${now}"`),
		},
		{
			name: "size over the limit once expanded",
			data: annotated(`k: "` + strings.Repeat("x", limit-20) + `${now}"`),
			want: []string{"s.yaml: nodes[1].annotations: Too long: may not be more than 262144 bytes"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDecodeError(t, tt.data, tt.want)
		})
	}
}

// TestNodeAnnotations: NodeObjects expands the placeholders at the time it
// is given and gives every node its own copy of its spec's annotations.
func TestNodeAnnotations(t *testing.T) {
	s, err := decodePlan("s.yaml", []byte(`
nodes:
  - name: maint
    count: 3
    annotations:
      scheduling.adminsched.io/maintenance-window: "${now+2h}/${now+4h}"
      example.com/team: infra
  - name: plain
  - name: fixed
    annotations: {scheduling.adminsched.io/maintenance-window: "2030-01-01T00:00:00Z/2030-01-01T01:00:00Z"}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2031, time.March, 4, 8, 15, 30, 999_999_999, time.UTC)
	nodes := s.NodeObjects(now)
	got := map[string]map[string]string{}
	for _, n := range nodes {
		got[n.Name] = n.Annotations
	}
	maint := map[string]string{
		"scheduling.adminsched.io/maintenance-window": "2031-03-04T10:15:30Z/2031-03-04T12:15:30Z",
		"example.com/team":                            "infra",
	}
	want := map[string]map[string]string{
		"maint-1": maint,
		"maint-2": maint,
		"maint-3": maint,
		"plain":   nil,
		"fixed":   {"scheduling.adminsched.io/maintenance-window": "2030-01-01T00:00:00Z/2030-01-01T01:00:00Z"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}

	// Every node has its own map, and none is the spec's.
	nodes[0].Annotations["example.com/team"] = "changed"
	nodes[0].Annotations["example.com/added"] = "x"
	if diff := cmp.Diff(maint, nodes[1].Annotations); diff != "" {
		t.Errorf("changing maint-1's annotations changed maint-2's (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(maint, nodes[2].Annotations); diff != "" {
		t.Errorf("changing maint-1's annotations changed maint-3's (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("${now+2h}/${now+4h}", s.Scenario.Nodes[0].Annotations["scheduling.adminsched.io/maintenance-window"]); diff != "" {
		t.Errorf("the spec's annotation (-want +got):\n%s", diff)
	}
	if _, ok := s.Scenario.Nodes[0].Annotations["example.com/added"]; ok {
		t.Errorf("changing maint-1's annotations changed the spec's")
	}

	// Made again later, the same scenario gives later times.
	later := s.NodeObjects(now.Add(24 * time.Hour))
	if diff := cmp.Diff("2031-03-05T10:15:30Z/2031-03-05T12:15:30Z", later[0].Annotations["scheduling.adminsched.io/maintenance-window"]); diff != "" {
		t.Errorf("a day later (-want +got):\n%s", diff)
	}
}

// TestNodeLabelPlaceholders: a label value's placeholders become Unix epoch
// seconds (GKE's maintenance label), and are checked as annotations' are,
// the label validated as expanded.
func TestNodeLabelPlaceholders(t *testing.T) {
	s, err := decodePlan("s.yaml", []byte(`
nodes:
  - name: gke
    labels: {cloud.google.com/scheduled-maintenance-time: "${now-10m}", pool: "a$$b-${now+1h}"}
`), nil)
	if err == nil {
		t.Fatal("a label value with a $ decoded, want an error")
	}
	if want := `nodes[0].labels: Invalid value: "a$b-`; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q, want one containing %q", err, want)
	}
	s, err = decodePlan("s.yaml", []byte(`
nodes:
  - name: gke
    labels: {cloud.google.com/scheduled-maintenance-time: "${now-10m}", pool: gpu}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2024, time.December, 1, 20, 10, 0, 500, time.UTC)
	want := map[string]string{"cloud.google.com/scheduled-maintenance-time": "1733083200", "pool": "gpu", "kubernetes.io/hostname": "gke"}
	if diff := cmp.Diff(want, s.NodeObjects(now)[0].Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	checkDecodeError(t, `nodes: [{name: a, labels: {k: "${now+1}"}}]`, []string{
		`s.yaml: nodes[0].labels[k]: Invalid value: "${now+1}": malformed placeholder "${now+1}": time: missing unit in duration "1"`})
}

// TestNodeExtendedResources: allocatable.extended puts extended resources
// (a GPU pool's) in the nodes' allocatable and capacity; a name the API
// server would refuse, or a fraction, is refused before anything starts.
func TestNodeExtendedResources(t *testing.T) {
	f, err := Decode("s.yaml", []byte("nodes: [{name: gpu, count: 2, allocatable: {cpu: 4, extended: {nvidia.com/gpu: 4, example.com/fpga: '1'}}}, {name: plain}]"))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := f.Plan([]string{"p"})
	if err != nil {
		t.Fatal(err)
	}
	nodes := plan.NodeObjects(time.Now())
	for _, n := range nodes[:2] {
		for _, list := range []corev1.ResourceList{n.Status.Allocatable, n.Status.Capacity} {
			got := map[string]string{"cpu": list.Cpu().String(), "gpu": list.Name("nvidia.com/gpu", "").String(), "fpga": list.Name("example.com/fpga", "").String()}
			if diff := cmp.Diff(map[string]string{"cpu": "4", "gpu": "4", "fpga": "1"}, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", n.Name, diff)
			}
		}
	}
	if _, ok := nodes[2].Status.Allocatable["nvidia.com/gpu"]; ok {
		t.Errorf("node plain has nvidia.com/gpu: %v", nodes[2].Status.Allocatable)
	}

	for _, tc := range []struct{ extended, want string }{
		{`{gpu: 1}`, `nodes[0].allocatable.extended[gpu]: Invalid value: "gpu": must be an extended resource name`},
		{`{kubernetes.io/gpu: 1}`, `nodes[0].allocatable.extended[kubernetes.io/gpu]: Invalid value: "kubernetes.io/gpu": must be an extended resource name`},
		{`{requests.example.com/gpu: 1}`, `must be an extended resource name`},
		{`{"example.com/a b": 1}`, `nodes[0].allocatable.extended[example.com/a b]: Invalid value: "example.com/a b": name part must consist of`},
		{`{nvidia.com/gpu: 1.5}`, `nodes[0].allocatable.extended[nvidia.com/gpu]: Invalid value: "1.5": must be a whole number`},
		{`{nvidia.com/gpu: -1}`, `nodes[0].allocatable.extended[nvidia.com/gpu]: Invalid value: "-1": must not be negative`},
		{`{nvidia.com/gpu: lots}`, `nodes[0].allocatable.extended[nvidia.com/gpu]: Invalid value: "lots"`},
		{`{nvidia.com/gpu: ""}`, `nodes[0].allocatable.extended[nvidia.com/gpu]: Required value`},
	} {
		_, err := Decode("s.yaml", []byte("nodes: [{name: a, allocatable: {extended: "+tc.extended+"}}]"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("extended %s: error %v, want it to contain %q", tc.extended, err, tc.want)
		}
	}
}
