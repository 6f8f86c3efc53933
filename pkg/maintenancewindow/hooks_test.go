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

package maintenancewindow

import (
	"testing"
	"time"
)

// closed is returned for a plugin without retries.
var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// retriesDone is closed once the plugin's retries have stopped.
func retriesDone(pl *MaintenanceWindow) <-chan struct{} {
	if pl.retries == nil {
		return closed
	}
	return pl.retries.done
}

// waitArmed waits until the retries' timer is set for at. Moving the fake
// clock before then would push the timer back by as much.
func waitArmed(t testing.TB, pl *MaintenanceWindow, at time.Time) {
	t.Helper()
	armed := func() bool {
		pl.retries.mu.Lock()
		defer pl.retries.mu.Unlock()
		return pl.retries.armedFor.Equal(at)
	}
	if err := waitFor(armed); err != nil {
		t.Fatalf("the retry timer was never set for %s", at.UTC().Format(time.RFC3339))
	}
}
