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

package v1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

// newConversionScheme returns a scheme that knows the internal and the v1
// args, as the scheduler's plugin-args conversion scheme does.
func newConversionScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := config.AddToScheme(scheme); err != nil {
		t.Fatalf("config.AddToScheme: %v", err)
	}
	if err := AddToScheme(scheme); err != nil {
		t.Fatalf("v1.AddToScheme: %v", err)
	}
	return scheme
}

func fullV1Args() *NodeLessPodsArgs {
	return &NodeLessPodsArgs{
		Mode: NodeLessPodsMostPods,
		PodSelector: &metav1.LabelSelector{
			MatchLabels: map[string]string{"app": "web", "tier": "frontend"},
			MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "track", Operator: metav1.LabelSelectorOpIn, Values: []string{"stable", "canary"}},
				{Key: "example.com/batch", Operator: metav1.LabelSelectorOpDoesNotExist},
			},
		},
		Namespaces:          []string{"team-a", "team-b"},
		IgnoreDaemonSetPods: ptr.To(false),
		RelativeToCapacity:  ptr.To(true),
	}
}

func fullInternalArgs() *config.NodeLessPodsArgs {
	return &config.NodeLessPodsArgs{
		Mode: config.NodeLessPodsMostPods,
		PodSelector: &metav1.LabelSelector{
			MatchLabels: map[string]string{"app": "web", "tier": "frontend"},
			MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "track", Operator: metav1.LabelSelectorOpIn, Values: []string{"stable", "canary"}},
				{Key: "example.com/batch", Operator: metav1.LabelSelectorOpDoesNotExist},
			},
		},
		Namespaces:          []string{"team-a", "team-b"},
		IgnoreDaemonSetPods: false,
		RelativeToCapacity:  true,
	}
}

func TestConvertV1ToInternalAndBack(t *testing.T) {
	tests := []struct {
		name         string
		in           *NodeLessPodsArgs
		wantInternal *config.NodeLessPodsArgs
		// wantBack is what converting wantInternal back to v1 gives.
		wantBack *NodeLessPodsArgs
	}{
		{
			name:         "fully set args round-trip",
			in:           fullV1Args(),
			wantInternal: fullInternalArgs(),
			wantBack:     fullV1Args(),
		},
		{
			name: "true and false booleans are both carried",
			in: &NodeLessPodsArgs{
				Mode:                NodeLessPodsLeastPods,
				IgnoreDaemonSetPods: ptr.To(true),
				RelativeToCapacity:  ptr.To(false),
			},
			wantInternal: &config.NodeLessPodsArgs{
				Mode:                config.NodeLessPodsLeastPods,
				IgnoreDaemonSetPods: true,
				RelativeToCapacity:  false,
			},
			wantBack: &NodeLessPodsArgs{
				Mode:                NodeLessPodsLeastPods,
				IgnoreDaemonSetPods: ptr.To(true),
				RelativeToCapacity:  ptr.To(false),
			},
		},
		{
			// Conversion does not default: undefaulted nil pointers become
			// false, and come back as explicit false. The loader always
			// defaults before it converts, so this is never seen in a config.
			name:         "unset pointers become false, not their defaults",
			in:           &NodeLessPodsArgs{},
			wantInternal: &config.NodeLessPodsArgs{},
			wantBack: &NodeLessPodsArgs{
				IgnoreDaemonSetPods: ptr.To(false),
				RelativeToCapacity:  ptr.To(false),
			},
		},
	}
	scheme := newConversionScheme(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in.DeepCopy()
			internal := &config.NodeLessPodsArgs{}
			if err := scheme.Convert(in, internal, nil); err != nil {
				t.Fatalf("Convert v1 -> internal: %v", err)
			}
			if diff := cmp.Diff(tc.wantInternal, internal); diff != "" {
				t.Errorf("v1 -> internal (-want, +got):\n%s", diff)
			}
			back := &NodeLessPodsArgs{}
			if err := scheme.Convert(internal, back, nil); err != nil {
				t.Fatalf("Convert internal -> v1: %v", err)
			}
			if diff := cmp.Diff(tc.wantBack, back); diff != "" {
				t.Errorf("internal -> v1 (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.in, in); diff != "" {
				t.Errorf("conversion changed its input (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestConvertInternalToV1(t *testing.T) {
	tests := []struct {
		name string
		in   *config.NodeLessPodsArgs
		want *NodeLessPodsArgs
	}{
		{
			name: "fully set args",
			in:   fullInternalArgs(),
			want: fullV1Args(),
		},
		{
			name: "zero args give explicit false pointers",
			in:   &config.NodeLessPodsArgs{},
			want: &NodeLessPodsArgs{
				IgnoreDaemonSetPods: ptr.To(false),
				RelativeToCapacity:  ptr.To(false),
			},
		},
		{
			name: "empty selector and empty namespaces are kept",
			in: &config.NodeLessPodsArgs{
				Mode:                config.NodeLessPodsLeastPods,
				PodSelector:         &metav1.LabelSelector{},
				Namespaces:          []string{},
				IgnoreDaemonSetPods: true,
			},
			want: &NodeLessPodsArgs{
				Mode:                NodeLessPodsLeastPods,
				PodSelector:         &metav1.LabelSelector{},
				Namespaces:          []string{},
				IgnoreDaemonSetPods: ptr.To(true),
				RelativeToCapacity:  ptr.To(false),
			},
		},
	}
	scheme := newConversionScheme(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := &NodeLessPodsArgs{}
			if err := scheme.Convert(tc.in.DeepCopy(), got, nil); err != nil {
				t.Fatalf("Convert internal -> v1: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("internal -> v1 (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestConvertToVersion follows the path the scheduler takes for pluginConfig
// args: ConvertToVersion to the internal group version, then back to v1.
func TestConvertToVersion(t *testing.T) {
	scheme := newConversionScheme(t)
	in := fullV1Args()
	in.SetGroupVersionKind(SchemeGroupVersion.WithKind("NodeLessPodsArgs"))

	obj, err := scheme.ConvertToVersion(in, config.SchemeGroupVersion)
	if err != nil {
		t.Fatalf("ConvertToVersion(internal): %v", err)
	}
	internal, ok := obj.(*config.NodeLessPodsArgs)
	if !ok {
		t.Fatalf("ConvertToVersion(internal) returned %T, want *config.NodeLessPodsArgs", obj)
	}
	if diff := cmp.Diff(fullInternalArgs(), internal); diff != "" {
		t.Errorf("ConvertToVersion(internal) (-want, +got):\n%s", diff)
	}

	obj, err = scheme.ConvertToVersion(internal, SchemeGroupVersion)
	if err != nil {
		t.Fatalf("ConvertToVersion(v1): %v", err)
	}
	want := fullV1Args()
	want.SetGroupVersionKind(SchemeGroupVersion.WithKind("NodeLessPodsArgs"))
	if diff := cmp.Diff(want, obj); diff != "" {
		t.Errorf("ConvertToVersion(v1) (-want, +got):\n%s", diff)
	}
}
