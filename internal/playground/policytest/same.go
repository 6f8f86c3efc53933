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

package policytest

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
)

// "Same placements" must hold between two runs of one config, and the
// scheduler breaks score ties between nodes at random: with 7 pods on 3
// equal nodes, which node gets 3 changes from run to run. So two runs place
// pods alike when, for each object of the scenario (a Deployment, a Pod)
// and each class of interchangeable nodes, the numbers of its pods on the
// nodes of the class are the same once sorted, and as many of its pods are
// unbound. Nodes are interchangeable when one spec of nodes[] made them,
// they hold the same bound pods (by namespace, labels, owner, priority and
// requests: not by name), and the same objects pin pods to them (by
// spec.nodeName or a kubernetes.io/hostname nodeSelector).

// nodeClasses maps each node of the plan to its class, and lists each
// class's nodes in scenario order; classes come in scenario order too.
func nodeClasses(plan *scenario.Plan) (classOf map[string]string, classes []string, members map[string][]string) {
	bound := map[string][]string{}
	for _, p := range plan.BoundPods {
		bound[p.Spec.NodeName] = append(bound[p.Spec.NodeName], boundPodKey(p))
	}
	for _, o := range plan.Objects {
		if n := pinnedTo(o); n != "" {
			bound[n] = append(bound[n], "pinned "+o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
		}
	}
	classOf = map[string]string{}
	members = map[string][]string{}
	for i, spec := range plan.Scenario.Nodes {
		for _, n := range scenario.NodeNames(spec) {
			keys := bound[n]
			slices.Sort(keys)
			c := fmt.Sprintf("%d|%s", i, strings.Join(keys, ";"))
			if _, seen := members[c]; !seen {
				classes = append(classes, c)
			}
			classOf[n] = c
			members[c] = append(members[c], n)
		}
	}
	return classOf, classes, members
}

// pinnedTo is the node an object's pods must run on, by its pod spec's
// nodeName or kubernetes.io/hostname nodeSelector, or "".
func pinnedTo(o *unstructured.Unstructured) string {
	spec := []string{"spec"}
	if o.GetKind() != "Pod" {
		spec = []string{"spec", "template", "spec"}
	}
	if n, _, _ := unstructured.NestedString(o.Object, append(spec, "nodeName")...); n != "" {
		return n
	}
	n, _, _ := unstructured.NestedString(o.Object, append(spec, "nodeSelector", corev1.LabelHostname)...)
	return n
}

// boundPodKey describes a bound pod without its name.
func boundPodKey(p *corev1.Pod) string {
	var owners []string
	for _, o := range p.OwnerReferences {
		owners = append(owners, o.Kind+"/"+o.Name)
	}
	var requests []corev1.ResourceList
	for _, c := range p.Spec.Containers {
		requests = append(requests, c.Resources.Requests)
	}
	for _, c := range p.Spec.InitContainers {
		requests = append(requests, c.Resources.Requests)
	}
	// Maps marshal with sorted keys: the key is canonical.
	b, _ := json.Marshal(struct {
		Namespace string
		Labels    map[string]string
		Owners    []string
		Priority  *int32
		Requests  []corev1.ResourceList
	}{p.Namespace, p.Labels, owners, p.Spec.Priority, requests})
	return string(b)
}

// placement is a run's pods per object: per node class the sorted counts,
// and the unbound ones.
type placement struct {
	counts  map[string]map[string][]int
	pending map[string]int
	// pods per object, to explain a difference.
	pods map[string][]*report.PodResult
}

func groupOf(p *report.PodResult) string {
	kind, name, found := strings.Cut(p.Object, "/")
	if !found {
		return "Pod " + p.Namespace + "/" + p.Name
	}
	return kind + " " + p.Namespace + "/" + name
}

func place(pods []*report.PodResult, nodes []string, classOf map[string]string, members map[string][]string) placement {
	pl := placement{counts: map[string]map[string][]int{}, pending: map[string]int{}, pods: map[string][]*report.PodResult{}}
	counted := map[string]bool{}
	for _, n := range nodes {
		counted[n] = true
	}
	perNode := map[string]map[string]int{} // group -> node -> pods
	for _, p := range pods {
		g := groupOf(p)
		pl.pods[g] = append(pl.pods[g], p)
		if perNode[g] == nil {
			perNode[g] = map[string]int{}
		}
		switch {
		case p.Node == "":
			pl.pending[g]++
		case counted[p.Node]:
			perNode[g][p.Node]++
		}
	}
	for g, on := range perNode {
		pl.counts[g] = map[string][]int{}
		for c, ns := range members {
			var counts []int
			for _, n := range ns {
				if counted[n] {
					counts = append(counts, on[n])
				}
			}
			slices.Sort(counts)
			slices.Reverse(counts)
			pl.counts[g][c] = counts
		}
	}
	return pl
}

func (e *evaluator) checkSame(a *scenario.Assertion, pods []*report.PodResult) *failure {
	res, ran := e.in.Others[a.SamePlacementsAs.Config]
	other := e.otherName(a.SamePlacementsAs.Config)
	if !ran {
		return &failure{msg: fmt.Sprintf("the scenario was not run under %s", other)}
	}
	nodes := e.selectNodes(a.Nodes)
	classOf, classes, members := nodeClasses(e.in.Plan)
	here := place(pods, nodes, classOf, members)
	there := place(e.selectPods(&res, a.Pods), nodes, classOf, members)

	groups := slices.Sorted(maps.Keys(here.pods))
	for g := range there.pods {
		if _, ok := here.pods[g]; !ok {
			groups = append(groups, g)
		}
	}
	mine := "here"
	if e.in.Config != "" {
		mine = "under " + e.in.Config
	}
	f := &failure{}
	var diffs []string
	for _, g := range groups {
		if here.pending[g] != there.pending[g] {
			diffs = append(diffs, fmt.Sprintf("%s: %d unbound %s, %d under %s", g, here.pending[g], mine, there.pending[g], other))
			f.explainGroup(g, e.in.Config, true, here, func(p *report.PodResult) bool { return p.Node == "" }, classOf, "")
			f.explainGroup(g, other, false, there, func(p *report.PodResult) bool { return p.Node == "" }, classOf, "")
		}
		for _, c := range classes {
			h, t := here.counts[g][c], there.counts[g][c]
			if slices.Equal(h, t) || (sum(h) == 0 && sum(t) == 0) {
				continue
			}
			diffs = append(diffs, fmt.Sprintf("%s on %s: %s %s, %s under %s", g, listed(members[c]), counts(h), mine, counts(t), other))
			bound := func(p *report.PodResult) bool { return p.Node != "" }
			f.explainGroup(g, e.in.Config, true, here, bound, classOf, c)
			f.explainGroup(g, other, false, there, bound, classOf, c)
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	f.msg = fmt.Sprintf("placed otherwise than under %s (pods per node of each object, per class of like nodes): %s", other, listed(diffs))
	return f
}

// otherName is how messages name a samePlacementsAs config: the path as
// resolved, or as written.
func (e *evaluator) otherName(config string) string {
	if shown := e.in.OtherNames[config]; shown != "" {
		return shown
	}
	return config
}

// explainGroup explains the first pod of group g in pl that ok accepts and,
// when class is set, is on a node of it; mine says pl is of the scenario's
// own run (and so the pod fails the assertion there).
func (f *failure) explainGroup(g, run string, mine bool, pl placement, ok func(*report.PodResult) bool, classOf map[string]string, class string) {
	for _, p := range pl.pods[g] {
		if ok(p) && (class == "" || classOf[p.Node] == class) {
			if mine {
				f.explain(run, p)
			} else {
				f.explainOther(run, p)
			}
			return
		}
	}
}

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

func counts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(s, " ") + "]"
}
