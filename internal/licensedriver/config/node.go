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

package config

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/adminsched/scheduler-plugins/internal/filelimit"
	"github.com/adminsched/scheduler-plugins/internal/yaml11"
)

// LoadNode reads, decodes, defaults and validates the file at path as the
// kubelet plugin's configuration (see DecodeNode).
func LoadNode(path string) (*Configuration, error) {
	data, err := filelimit.Read(path, MaxFileBytes, "license driver configuration")
	if err != nil {
		return nil, err
	}
	c, err := DecodeNode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// DecodeNode decodes data as strictly as Decode, defaults it, and validates
// it with ValidateNode: the kubelet plugin reads only the features, so its
// configuration may leave the source (and the seats) out.
func DecodeNode(data []byte) (*Configuration, error) {
	c, err := decodeStrict(data)
	if err != nil {
		return nil, err
	}
	SetDefaults(c)
	if errs := ValidateNode(c); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return c, nil
}

// ValidateNode checks a defaulted configuration of the kubelet plugin: as
// Validate does, except that the source is optional, and with it the
// seats the static source requires. A configuration with a source (the
// controller's own file) is checked as the controller's.
func ValidateNode(c *Configuration) field.ErrorList {
	errs := Validate(c)
	if c.Source != (Source{}) {
		return errs
	}
	// Without a source, the one error about it is that none is set: every
	// other check of Validate applies (features, their names, pools,
	// resource names, device classes and env; seats, when given, in range).
	source := field.NewPath("source").String()
	var out field.ErrorList
	for _, e := range errs {
		if e.Field != source {
			out = append(out, e)
		}
	}
	return out
}

// decodeStrict is Decode's decoding, before defaults and validation:
// yaml11's checks, one document, unknown and duplicate fields refused with
// their path.
func decodeStrict(data []byte) (*Configuration, error) {
	if errs := yaml11.Check(data); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	if n := documents(data); n > 1 {
		return nil, fmt.Errorf("the file holds %d YAML documents; the configuration is one", n)
	}
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, err
	}
	var c Configuration
	strictErrs, err := kjson.UnmarshalStrict(j, &c, kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields)
	if err != nil {
		return nil, err
	}
	if len(strictErrs) > 0 {
		return nil, errors.Join(strictErrs...)
	}
	return &c, nil
}
