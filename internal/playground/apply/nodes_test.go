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

package apply

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// nodeTestNodes are n ready nodes named node-0000...
func nodeTestNodes(n int) []*corev1.Node {
	nodes := make([]*corev1.Node, n)
	for i := range nodes {
		nodes[i] = &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%04d", i)},
			Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
		}
	}
	return nodes
}

// nodeTestClient is a fake clientset that records the names of the nodes
// created, in order, and fails the creation of failName.
func nodeTestClient(failName string) (*fake.Clientset, func() []string) {
	client := fake.NewClientset()
	var (
		mu      sync.Mutex
		created []string
	)
	client.PrependReactor("create", "nodes", func(action k8stesting.Action) (bool, runtime.Object, error) {
		node := action.(k8stesting.CreateAction).GetObject().(*corev1.Node)
		if node.Name == failName {
			return true, nil, errors.New("no room")
		}
		if len(node.Status.Conditions) == 0 {
			return true, nil, errors.New("created without its status")
		}
		mu.Lock()
		created = append(created, node.Name)
		mu.Unlock()
		return false, nil, nil
	})
	return client, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(created)
	}
}

func TestCreateNodes(t *testing.T) {
	names := func(nodes []*corev1.Node) []string {
		var out []string
		for _, n := range nodes {
			out = append(out, n.Name)
		}
		return out
	}
	tests := []struct {
		name     string
		nodes    int
		fail     string
		inOrder  bool // created one by one, in order
		wantErr  string
		progress string
	}{
		{name: "a few, in order", nodes: 3, inOrder: true},
		{name: "100, still in order", nodes: 100, inOrder: true},
		{name: "more, in parallel", nodes: 250, progress: "creating 250 nodes\n"},
		{name: "an error stops the creations after it", nodes: 5, fail: "node-0002", inOrder: true, wantErr: "creating node node-0002: no room"},
		{name: "an error in parallel names the node", nodes: 150, fail: "node-0149", wantErr: "creating node node-0149: no room", progress: "creating 150 nodes\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nodes := nodeTestNodes(tc.nodes)
			client, created := nodeTestClient(tc.fail)
			var progress bytes.Buffer
			err := CreateNodes(context.Background(), client, nodes, &progress)
			if gotErr := fmt.Sprint(err); (tc.wantErr == "" && err != nil) || !strings.Contains(gotErr, tc.wantErr) {
				t.Fatalf("CreateNodes: %v, want an error containing %q", err, tc.wantErr)
			}
			want := names(nodes)
			if tc.fail != "" {
				want = slices.DeleteFunc(want, func(n string) bool { return n == tc.fail })
				if tc.inOrder {
					want = want[:slices.Index(names(nodes), tc.fail)]
				}
			}
			got := created()
			if !tc.inOrder {
				slices.Sort(got)
				if tc.fail != "" {
					// The creations not started when the error came are
					// skipped: only check that no node is created twice.
					if len(slices.Compact(slices.Clone(got))) != len(got) {
						t.Errorf("a node was created twice: %v", got)
					}
					want = got
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("nodes created (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.progress, progress.String()); diff != "" {
				t.Errorf("progress (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCreateNodesCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	client, created := nodeTestClient("")
	err := CreateNodes(ctx, client, nodeTestNodes(500), nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("CreateNodes with a canceled context: %v, want context.Canceled", err)
	}
	if n := len(created()); n > boundWorkers {
		t.Errorf("%d nodes created after the context was canceled, want at most the %d in flight", n, boundWorkers)
	}
}
