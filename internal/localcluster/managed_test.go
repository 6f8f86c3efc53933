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

package localcluster

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

func nodeLease(name, holder string, renew *time.Time) *coordinationv1.Lease {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: corev1.NamespaceNodeLease}}
	if holder != "" {
		l.Spec.HolderIdentity = ptr.To(holder)
	}
	if renew != nil {
		l.Spec.RenewTime = &metav1.MicroTime{Time: *renew}
	}
	return l
}

func TestWaitNodesManaged(t *testing.T) {
	renew := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	later := renew.Add(7 * time.Second)
	tests := []struct {
		name    string
		objects []runtime.Object
		nodes   []string
		want    map[string]time.Time
		wantErr []string
	}{
		{
			name:  "held leases return their renew times",
			nodes: []string{"node-a", "node-b"},
			objects: []runtime.Object{
				nodeLease("node-a", "kwok-controller", &renew),
				nodeLease("node-b", "kwok-controller", &later),
			},
			want: map[string]time.Time{"node-a": renew, "node-b": later},
		},
		{
			name:    "a missing lease names the node",
			nodes:   []string{"node-a"},
			wantErr: []string{"node node-a has no lease", "[node-a]", corev1.NamespaceNodeLease},
		},
		{
			name:    "a lease without a holder is not managed",
			nodes:   []string{"node-a"},
			objects: []runtime.Object{nodeLease("node-a", "", &renew)},
			wantErr: []string{`the lease of node node-a is held by ""`},
		},
		{
			name:    "a lease never renewed is not managed",
			nodes:   []string{"node-a"},
			objects: []runtime.Object{nodeLease("node-a", "kwok-controller", nil)},
			wantErr: []string{`the lease of node node-a is held by "kwok-controller", renewed <nil>`},
		},
		{
			name:  "with one node held and one missing, the error names the missing one",
			nodes: []string{"node-a", "node-b"},
			objects: []runtime.Object{
				nodeLease("node-a", "kwok-controller", &renew),
			},
			wantErr: []string{"node node-b has no lease", "[node-a node-b]"},
		},
		{
			name:    "no nodes is done at once",
			want:    map[string]time.Time{},
			objects: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset(tt.objects...)
			got, err := WaitNodesManaged(context.Background(), client, 300*time.Millisecond, tt.nodes...)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("WaitNodesManaged(%v) = %v, want an error", tt.nodes, got)
				}
				for _, part := range tt.wantErr {
					if !strings.Contains(err.Error(), part) {
						t.Errorf("error %q does not contain %q", err, part)
					}
				}
				if got != nil {
					t.Errorf("renew times = %v on error, want nil", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("WaitNodesManaged(%v): %v", tt.nodes, err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("renew times = %v, want %v", got, tt.want)
			}
			for name, want := range tt.want {
				if !got[name].Equal(want) {
					t.Errorf("renew time of %s = %v, want %v", name, got[name], want)
				}
			}
		})
	}
}

// TestWaitNodesManagedRetries shows that the wait keeps polling through
// read errors and a lease that appears late, and that a held lease is not
// read again once seen.
func TestWaitNodesManagedRetries(t *testing.T) {
	renew := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	client := fake.NewClientset(nodeLease("node-a", "kwok-controller", &renew))
	gets := map[string]int{}
	client.PrependReactor("get", "leases", func(action k8stesting.Action) (bool, runtime.Object, error) {
		name := action.(k8stesting.GetAction).GetName()
		gets[name]++
		if name == "node-b" && gets[name] == 1 {
			return true, nil, errors.New("connection refused")
		}
		if name == "node-b" && gets[name] == 2 {
			// KWOK takes the lease now: later reads find it held.
			if err := client.Tracker().Add(nodeLease("node-b", "kwok-controller", &renew)); err != nil {
				t.Errorf("adding the lease: %v", err)
			}
		}
		return false, nil, nil
	})
	got, err := WaitNodesManaged(context.Background(), client, 5*time.Second, "node-a", "node-b")
	if err != nil {
		t.Fatalf("WaitNodesManaged: %v", err)
	}
	if len(got) != 2 {
		t.Errorf("renew times = %v, want both nodes", got)
	}
	if gets["node-a"] != 1 {
		t.Errorf("the held lease of node-a was read %d times, want once", gets["node-a"])
	}
	if gets["node-b"] < 2 {
		t.Errorf("the lease of node-b was read %d times, want a retry after the error", gets["node-b"])
	}
}

func TestWaitNodesManagedReadError(t *testing.T) {
	client := fake.NewClientset()
	client.PrependReactor("get", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("connection refused")
	})
	_, err := WaitNodesManaged(context.Background(), client, 300*time.Millisecond, "node-a")
	if err == nil || !strings.Contains(err.Error(), "reading the lease of node node-a: connection refused") {
		t.Errorf("error = %v, want it to name the node and the read error", err)
	}
}

func TestWaitNodesManagedCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := WaitNodesManaged(ctx, fake.NewClientset(), time.Minute, "node-a")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want it to wrap context.Canceled", err)
	}
}
