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
	"strings"
	"testing"
	"time"

	v1config "github.com/adminsched/scheduler-plugins/apis/config/v1"
	"github.com/adminsched/scheduler-plugins/internal/testconfig"
)

// TestBinaryRefusesBadConfig starts bin/kube-scheduler as users start it,
// with a config whose NodeLessPods args are invalid: it exits with an error
// that names the plugin, the field and the value. Which args are refused,
// and how each is worded, are unit tests (apis/config/validation,
// apis/config/scheme, pkg/nodelesspods); the paths through app.Setup
// (decoding, the plugin's New) are cmd/scheduler's TestSetupRejectsBadConfig.
func TestBinaryRefusesBadConfig(t *testing.T) {
	tc := newTestContext(t)
	config := testconfig.Write(t, nodeLessPodsConfig(&v1config.NodeLessPodsArgs{Mode: "Fewest"}))
	args, _ := tc.servingArgs()
	p := tc.runBinary("bad-config-scheduler", append(args, "--config="+config)...)
	select {
	case <-p.Done():
	case <-time.After(waitTimeout):
		t.Fatalf("the scheduler still runs with a bad config after %v; output:\n%s", waitTimeout, p.Output())
	}
	if p.ProcessState().Success() {
		t.Errorf("the scheduler exited with status 0, want a failure")
	}
	// klog quotes the error: err="... \"NodeLessPods\" ...".
	out := strings.ReplaceAll(p.Output(), `\"`, `"`)
	for _, want := range []string{`initializing plugin "NodeLessPods"`, `invalid NodeLessPods args: mode: Unsupported value: "Fewest"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the scheduler's output does not contain %q:\n%s", want, out)
		}
	}
}
