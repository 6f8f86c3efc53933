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

package placementpolicy

import (
	"reflect"
	"testing"
	"unsafe"

	v1 "k8s.io/api/core/v1"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

// TestNoRulePathLayout: what the no-rule path reads of the plugin (the
// gate's masks, its single key and open flag, the stopped memo and skip's
// code) lies in its first 64 bytes, and the plugin is allocated on a
// 64-byte boundary, so that the path reads one cache line of the plugin.
func TestNoRulePathLayout(t *testing.T) {
	var pl PlacementPolicy
	if size := unsafe.Sizeof(pl); size != 256 {
		t.Errorf("PlacementPolicy is %d bytes, want 256 (a size class of 256-byte aligned objects): adjust its padding", size)
	}
	for name, end := range map[string]uintptr{
		"gate.nsLens":  unsafe.Offsetof(pl.gate) + unsafe.Offsetof(pl.gate.nsLens) + unsafe.Sizeof(pl.gate.nsLens),
		"gate.keyLens": unsafe.Offsetof(pl.gate) + unsafe.Offsetof(pl.gate.keyLens) + unsafe.Sizeof(pl.gate.keyLens),
		"gate.key":     unsafe.Offsetof(pl.gate) + unsafe.Offsetof(pl.gate.key) + unsafe.Sizeof(pl.gate.key),
		"gate.open":    unsafe.Offsetof(pl.gate) + unsafe.Offsetof(pl.gate.open) + unsafe.Sizeof(pl.gate.open),
		"stopped":      unsafe.Offsetof(pl.stopped) + unsafe.Sizeof(pl.stopped),
		"skip's code":  unsafe.Offsetof(pl.skip) + unsafe.Sizeof(pl.skip.Code()),
	} {
		if end > 64 {
			t.Errorf("%s ends at byte %d of the plugin, past its first cache line", name, end)
		}
	}
	p := newPlugin(t, testArgs(func(a *config.PlacementPolicyArgs) {
		a.Rules = []config.PlacementRule{{Name: "eu", PodSelector: selector("placement", "eu"), NodeSelector: selector(regionKey, "eu-west-1"), Action: config.PlacementRequire}}
	}))
	if addr := uintptr(unsafe.Pointer(p)); addr%64 != 0 {
		t.Errorf("the plugin is at %#x, not on a 64-byte boundary", addr)
	}
	if p.gate.key != "placement" || p.gate.lists.keys != nil {
		t.Errorf("a single key is held in the gate: key %q, lists.keys %q", p.gate.key, p.gate.lists.keys)
	}
	for _, tc := range []struct {
		labels map[string]string
		want   bool
	}{{nil, false}, {map[string]string{"app": "web"}, false}, {map[string]string{"placement": "us"}, true}} {
		pod := &v1.Pod{}
		pod.Labels = tc.labels
		if got := p.gate.mayApply(pod); got != tc.want {
			t.Errorf("mayApply(labels %v) = %v, want %v", tc.labels, got, tc.want)
		}
	}
}

// TestNoRuleCodeTogether: what the framework calls for a pod no rule
// selects (Name, then PreFilter's and PreScore's no-rule paths, entry.go)
// is emitted in that order and within a few hundred bytes, so that a cycle
// runs one page of our code, not three (see entry.go). Before, PreFilter
// came before Name and PreScore 5,600 bytes after it. The bound leaves room
// for the race detector's and coverage's instrumentation.
func TestNoRuleCodeTogether(t *testing.T) {
	entry := func(f any) uintptr { return reflect.ValueOf(f).Pointer() }
	name, preFilter, preScore := entry((*PlacementPolicy).Name), entry((*PlacementPolicy).PreFilter), entry((*PlacementPolicy).PreScore)
	if name >= preFilter || preFilter >= preScore || preScore-name > 2048 {
		t.Errorf("Name at %#x, PreFilter at %#x, PreScore at %#x: want them in this order within 2048 bytes (keep them together at the top of entry.go)", name, preFilter, preScore)
	}
}
