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

package htmlreport

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
)

// render writes p and parses the output, failing the test on an error.
func render(t testing.TB, p Page) (string, *html.Node) {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, p); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return b.String(), doc
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, class string) bool {
	return n.Type == html.ElementNode && slices.Contains(strings.Fields(attr(n, "class")), class)
}

// all are the nodes below root (root included) for which keep is true, in
// document order.
func all(root *html.Node, keep func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if keep(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return out
}

func byClass(root *html.Node, class string) []*html.Node {
	return all(root, func(n *html.Node) bool { return hasClass(n, class) })
}

func byTag(root *html.Node, tag string) []*html.Node {
	return all(root, func(n *html.Node) bool { return n.Type == html.ElementNode && n.Data == tag })
}

func text(n *html.Node) string {
	var b strings.Builder
	for _, t := range all(n, func(n *html.Node) bool { return n.Type == html.TextNode }) {
		b.WriteString(t.Data)
	}
	return b.String()
}

// childText is the text of n's first descendant with class.
func childText(t *testing.T, n *html.Node, class string) string {
	t.Helper()
	found := byClass(n, class)
	if len(found) == 0 {
		t.Fatalf("no .%s in %s", class, text(n))
	}
	return text(found[0])
}

// pods are count pods of object in namespace default, named with suffix,
// bound to node.
func pods(object, suffix, node string, count int) []report.PodResult {
	var out []report.PodResult
	name := strings.ToLower(strings.TrimPrefix(object, "Deployment/"))
	for i := range count {
		out = append(out, report.PodResult{Namespace: "default", Name: fmt.Sprintf("%s-%s%d", name, suffix, i), Object: object, Node: node})
	}
	return out
}

// tutorial is the tutorial's shape: three nodes holding 3, 2 and 2 pods.
func tutorial() report.Result {
	var ps []report.PodResult
	ps = append(ps, pods("Deployment/web", "a", "node-1", 2)...)
	ps = append(ps, pods("Deployment/api", "b", "node-1", 1)...)
	ps = append(ps, pods("Deployment/web", "c", "node-2", 2)...)
	ps = append(ps, pods("Deployment/api", "d", "node-3", 2)...)
	return report.Result{
		Nodes:  []report.NodeResult{{Name: "node-1", Pods: 3}, {Name: "node-2", Pods: 2}, {Name: "node-3", Pods: 2}},
		Pods:   ps,
		Spread: 1,
	}
}
