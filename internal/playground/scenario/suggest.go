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
	"reflect"
	"strings"

	"github.com/adminsched/scheduler-plugins/internal/didyoumean"
)

// strictFieldError is what sigs.k8s.io/json returns for an unknown or
// duplicate field: its message and the field's path.
type strictFieldError interface {
	error
	FieldPath() string
}

// withFieldSuggestion adds to an unknown field error the path of the field
// meant, found among the fields of the struct of t that holds it:
// `unknown field "objects[0].spec.replica"; did you mean
// "objects[0].spec.replicas"?`. Other errors are returned as they are.
func withFieldSuggestion(t reflect.Type, err error) error {
	strict, ok := err.(strictFieldError)
	if !ok || !strings.HasPrefix(strict.Error(), "unknown field") {
		return err
	}
	meant := meantField(t, strict.FieldPath())
	if meant == "" {
		return err
	}
	return fmt.Errorf("%w; did you mean %q?", err, meant)
}

// meantField returns path with its last element replaced by the JSON field
// of the struct it is in whose name is closest, or "" when none is close
// or path does not lead through t (a map key with a dot in it).
func meantField(t reflect.Type, path string) string {
	parts := strings.Split(path, ".")
	for i, part := range parts {
		name, indexes, _ := strings.Cut(part, "[")
		t = deref(t)
		if i == len(parts)-1 {
			if t.Kind() != reflect.Struct || indexes != "" {
				return ""
			}
			meant := didyoumean.Closest(name, jsonFields(t))
			if meant == "" {
				meant = nestedField(t, name)
			}
			if meant == "" {
				return ""
			}
			parts[i] = meant
			return strings.Join(parts, ".")
		}
		switch t.Kind() {
		case reflect.Map:
			t = t.Elem()
		case reflect.Struct:
			f, ok := jsonField(t, name)
			if !ok {
				return ""
			}
			t = f
		default:
			return ""
		}
		for range strings.Count(part, "[") {
			if t = deref(t); t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
				return ""
			}
			t = t.Elem()
		}
	}
	return ""
}

// nestedField finds name one level down, in a struct field of struct t:
// cpu, written on a node, is allocatable.cpu; replicas, written on a
// Deployment, is spec.replicas. Only the name itself, but for case.
func nestedField(t reflect.Type, name string) string {
	for _, child := range jsonFields(t) {
		ct, _ := jsonField(t, child)
		if ct = deref(ct); ct.Kind() != reflect.Struct {
			continue
		}
		for _, grandchild := range jsonFields(ct) {
			if strings.EqualFold(grandchild, name) {
				return child + "." + grandchild
			}
		}
	}
	return ""
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// jsonFields lists the JSON names of struct t's fields, those of embedded
// structs without a name (TypeMeta, inline) included, as encoding/json
// decodes them.
func jsonFields(t reflect.Type) []string {
	var names []string
	for f := range t.Fields() {
		name, inline := jsonName(f)
		switch {
		case inline:
			names = append(names, jsonFields(deref(f.Type))...)
		case name != "":
			names = append(names, name)
		}
	}
	return names
}

// jsonField returns the type of the field of struct t named name in JSON.
func jsonField(t reflect.Type, name string) (reflect.Type, bool) {
	for f := range t.Fields() {
		n, inline := jsonName(f)
		if inline {
			if ft, ok := jsonField(deref(f.Type), name); ok {
				return ft, true
			}
		}
		if n == name {
			return f.Type, true
		}
	}
	return nil, false
}

// jsonName is a field's name in JSON ("" when it has none: unexported or
// `json:"-"`), and whether it is an embedded struct whose fields are
// decoded as the outer struct's.
func jsonName(f reflect.StructField) (string, bool) {
	tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	switch {
	case tag == "-":
		return "", false
	case f.Anonymous && tag == "" && deref(f.Type).Kind() == reflect.Struct:
		return "", true
	case !f.IsExported():
		return "", false
	case tag != "":
		return tag, false
	}
	return f.Name, false
}
