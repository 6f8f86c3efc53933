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

package kubeversion

import "testing"

func TestFeatures(t *testing.T) {
	for _, f := range Features {
		if f.Since > Minor+1 || f.Since < Supported[0] {
			t.Errorf("%s: Since 1.%d is outside the supported minors %v", f.Name, f.Since, Supported)
		}
		if Has(f) != (Minor >= f.Since) {
			t.Errorf("%s: Has = %v on 1.%d", f.Name, Has(f), Minor)
		}
	}
	if Supported[len(Supported)-1] < Minor {
		t.Errorf("Supported %v does not list this build's minor 1.%d", Supported, Minor)
	}
}
