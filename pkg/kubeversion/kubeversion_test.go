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

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestFeatures(t *testing.T) {
	for _, f := range Features {
		if f.Since > Newest() || f.Since < Supported[0] {
			t.Errorf("%s: Since 1.%d is outside the supported minors %v", f.Name, f.Since, Supported)
		}
		if Has(f) != (Minor >= f.Since) {
			t.Errorf("%s: Has = %v on 1.%d", f.Name, Has(f), Minor)
		}
	}
	if Newest() < Minor {
		t.Errorf("Supported %v does not list this build's minor 1.%d", Supported, Minor)
	}
}

// TestModFile builds flags for this build's minor from trees with and
// without an older minor's module file, as main and a release tree are.
func TestModFile(t *testing.T) {
	main, release := t.TempDir(), t.TempDir()
	older := filepath.Join(main, fmt.Sprintf("go.1.%d.mod", Minor))
	if err := os.WriteFile(older, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := ModFile(main); got != older {
		t.Errorf("ModFile(main tree with %s) = %s", older, got)
	}
	if got, want := BuildFlags(main), []string{"-modfile=" + older, "-tags=kube" + String()}; !slices.Equal(got, want) {
		t.Errorf("BuildFlags(main tree) = %q, want %q", got, want)
	}
	if got := ModFile(release); got != filepath.Join(release, "go.mod") {
		t.Errorf("ModFile(tree without go.1.%d.mod) = %s, want its go.mod", Minor, got)
	}
	if got := BuildFlags(release); got != nil {
		t.Errorf("BuildFlags(tree without go.1.%d.mod) = %q, want none", Minor, got)
	}
}
