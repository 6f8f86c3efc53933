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

package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"sigs.k8s.io/descheduler/pkg/api/v1alpha2"
)

// maxPolicyBytes caps the policy file: 1 MiB is the most a ConfigMap holds.
const maxPolicyBytes = 1 << 20

// checkPolicy decodes the policy file strictly and case-sensitively before
// upstream loads it. Upstream's loader drops unknown keys without a word,
// and `preEvictionFilter` for `preevictionfilter` is the easy mistake: the
// evictor then runs at filter only, and evictions it would refuse go
// through. The plugins' args are left to upstream, which decodes them
// strictly.
func checkPolicy(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("--policy-config-file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPolicyBytes+1))
	if err != nil {
		return fmt.Errorf("--policy-config-file: %w", err)
	}
	if len(data) > maxPolicyBytes {
		return fmt.Errorf("--policy-config-file %s: larger than %d bytes", path, maxPolicyBytes)
	}
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return fmt.Errorf("--policy-config-file %s: %w", path, err)
	}
	var policy v1alpha2.DeschedulerPolicy
	strict, err := sigsjson.UnmarshalStrict(js, &policy)
	if err != nil {
		return fmt.Errorf("--policy-config-file %s: %w", path, err)
	}
	if len(strict) > 0 {
		return fmt.Errorf("--policy-config-file %s: %w (keys are case-sensitive; the extension points are "+
			"presort, sort, deschedule, balance, filter and preevictionfilter)", path, errors.Join(strict...))
	}
	return nil
}
