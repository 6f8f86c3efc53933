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

package nodeclaims

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/window"
)

// never is Karpenter's spelling of an expireAfter that does not expire.
const never = "Never"

// Karpenter's condition types (sigs.k8s.io/karpenter pkg/apis/v1) read here.
const (
	conditionDrifted          = "Drifted"
	conditionDisruptionReason = "DisruptionReason"
)

// keys are what the index finds a NodeClaim by: its status.nodeName, ""
// until the node registers, and its status.providerID, "" until launched.
type keys struct {
	node, provider string
}

// convert reads what the scheduler needs of a NodeClaim, once per event so
// that lookups only copy a small struct. A malformed expireAfter is returned
// in badExpiry (with ExpiresAt zero: a guess at the expiry could keep pods
// off a healthy node).
func convert(u *unstructured.Unstructured) (k keys, nc window.NodeClaim, badExpiry error) {
	nc.Name = u.GetName()
	k.node, _, _ = unstructured.NestedString(u.Object, "status", "nodeName")
	k.provider, _, _ = unstructured.NestedString(u.Object, "status", "providerID")
	ttl, ok, err := expireAfter(u.Object)
	switch {
	case err != nil:
		badExpiry = err
	case ok:
		// Without a creation time there is nothing to count from. UTC: the
		// index compares NodeClaims with ==, which a Location would upset.
		if created := u.GetCreationTimestamp(); !created.IsZero() {
			nc.ExpiresAt = created.Add(ttl).UTC()
		}
	}
	// NoCopy: NestedSlice would copy the list, and panic on a value that is
	// not JSON.
	v, _, _ := unstructured.NestedFieldNoCopy(u.Object, "status", "conditions")
	conds, _ := v.([]any)
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if s, _ := m["status"].(string); s != "True" {
			continue
		}
		switch t, _ := m["type"].(string); t {
		case conditionDrifted:
			nc.Drifted = true
		case conditionDisruptionReason:
			nc.Disrupting = true
		}
	}
	return k, nc, badExpiry
}

// expireAfter returns spec.expireAfter; ok is false when the NodeClaim never
// expires (absent, null or "Never"). Karpenter accepts only non-negative
// durations, so anything else is malformed.
func expireAfter(obj map[string]any) (ttl time.Duration, ok bool, err error) {
	v, found, _ := unstructured.NestedFieldNoCopy(obj, "spec", "expireAfter")
	if !found || v == nil {
		return 0, false, nil
	}
	s, isString := v.(string)
	if !isString {
		return 0, false, fmt.Errorf("spec.expireAfter is a %T, not a string", v)
	}
	if s == never {
		return 0, false, nil
	}
	ttl, err = time.ParseDuration(s)
	if err != nil {
		return 0, false, fmt.Errorf("spec.expireAfter: %w", err)
	}
	if ttl < 0 {
		return 0, false, fmt.Errorf("spec.expireAfter %q is negative", s)
	}
	return ttl, true, nil
}
