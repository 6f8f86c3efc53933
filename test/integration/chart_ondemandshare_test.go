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

package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	v1config "github.com/adminsched/scheduler-plugins/apis/config/v1"
)

// checkOnDemandShareArgsSchema holds the schema's onDemandShareArgs to
// apis/config/v1's OnDemandShareArgs: at every level the schema's
// properties are the type's JSON fields (apiVersion and kind aside), so that a field added to the API
// is not refused by the chart (additionalProperties is false).
func checkOnDemandShareArgsSchema(t *testing.T) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(chartDir, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	args, _, _ := unstructured.NestedMap(schema, "definitions", "onDemandShareArgs")
	policy, _, _ := unstructured.NestedMap(args, "properties", "policies", "items")
	for _, tt := range []struct {
		path string
		def  map[string]any
		typ  reflect.Type
	}{
		{"onDemandShareArgs", args, reflect.TypeFor[v1config.OnDemandShareArgs]()},
		{"onDemandShareArgs.policies[]", policy, reflect.TypeFor[v1config.OnDemandSharePolicy]()},
		{"onDemandShareArgs.policies[].capacity", nested(policy, "capacity"), reflect.TypeFor[v1config.CapacityClasses]()},
		{"onDemandShareArgs.policies[].recovery", nested(policy, "recovery"), reflect.TypeFor[v1config.SpotRecovery]()},
	} {
		props, _, _ := unstructured.NestedMap(tt.def, "properties")
		got := slices.Sorted(func(yield func(string) bool) {
			for k := range props {
				// The API's TypeMeta, which jsonFields leaves out.
				if k == "apiVersion" || k == "kind" {
					continue
				}
				if !yield(k) {
					return
				}
			}
		})
		if diff := cmp.Diff(jsonFields(tt.typ), got); diff != "" {
			t.Errorf("values.schema.json definitions.%s properties differ from %s's JSON fields (-API, +schema):\n%s", tt.path, tt.typ, diff)
		}
		if ap, _, _ := unstructured.NestedBool(tt.def, "additionalProperties"); ap {
			t.Errorf("values.schema.json definitions.%s allows unknown properties", tt.path)
		}
	}
}

// nested returns properties.<name> of def.
func nested(def map[string]any, name string) map[string]any {
	m, _, _ := unstructured.NestedMap(def, "properties", name)
	return m
}
