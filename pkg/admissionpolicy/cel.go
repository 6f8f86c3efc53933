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

package admissionpolicy

import (
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CELString quotes s as a CEL string literal. CEL takes Go's escapes
// (\", \\, \n, \xHH, \uHHHH, \UHHHHHHHH), so Go's quoting is a valid one.
func CELString(s string) string { return strconv.Quote(s) }

// CELStrings writes values as a CEL list of string literals.
func CELStrings(values []string) string {
	parts := make([]string, 0, len(values))
	for _, v := range values {
		parts = append(parts, CELString(v))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// CELMap writes a CEL map literal of the key/value pairs kv (values already
// CEL). With several pairs each value is dyn: a literal's values must
// otherwise share one type.
func CELMap(kv ...string) string {
	parts := make([]string, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		v := kv[i+1]
		if len(kv) > 2 {
			v = "dyn(" + v + ")"
		}
		parts = append(parts, CELString(kv[i])+": "+v)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// CELRequirements writes reqs as a CEL list of maps, the shape of a
// NodeSelectorRequirement in JSON.
func CELRequirements(reqs []v1.NodeSelectorRequirement) string {
	parts := make([]string, 0, len(reqs))
	for _, r := range reqs {
		kv := []string{"key", CELString(r.Key), "operator", CELString(string(r.Operator))}
		if len(r.Values) > 0 {
			kv = append(kv, "values", CELStrings(r.Values))
		}
		parts = append(parts, CELMap(kv...))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// CELSelects writes a CEL expression that is true when the labels at field,
// a field selection such as object.metadata.labels that may be absent,
// match sel as a label selector matches them. A nil or empty selector
// matches everything. sel must be valid (as validation leaves it).
func CELSelects(field string, sel *metav1.LabelSelector) string {
	if sel == nil {
		return "true"
	}
	has := func(key string) string {
		return "(has(" + field + ") && " + CELString(key) + " in " + field + ")"
	}
	value := func(key string) string { return field + "[" + CELString(key) + "]" }
	var terms []string
	keys := make([]string, 0, len(sel.MatchLabels))
	for k := range sel.MatchLabels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		terms = append(terms, "("+has(k)+" && "+value(k)+" == "+CELString(sel.MatchLabels[k])+")")
	}
	for _, e := range sel.MatchExpressions {
		in := "(" + has(e.Key) + " && " + value(e.Key) + " in " + CELStrings(e.Values) + ")"
		switch e.Operator {
		case metav1.LabelSelectorOpIn:
			terms = append(terms, in)
		case metav1.LabelSelectorOpNotIn:
			terms = append(terms, "!"+in)
		case metav1.LabelSelectorOpExists:
			terms = append(terms, has(e.Key))
		case metav1.LabelSelectorOpDoesNotExist:
			terms = append(terms, "!"+has(e.Key))
		default:
			// An operator validation refuses: matching nothing is safer
			// than matching everything.
			terms = append(terms, "false")
		}
	}
	if len(terms) == 0 {
		return "true"
	}
	return strings.Join(terms, " && ")
}
