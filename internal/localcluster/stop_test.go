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

package localcluster

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestStopWithAWatchOpen: a client outside that still watches (kubectl
// get -w, the license driver's controller next to `playground --keep`)
// does not hold the stop until its one-minute timeout, as it did when the
// API server waited for its watches to end on their own (61 s here, 3 s
// now). The bound is half the timeout: what is checked is that the server
// ends the watch, not how fast it stops.
func TestStopWithAWatchOpen(t *testing.T) {
	assets, err := AssetsFromEnv("../../bin")
	if err != nil {
		t.Fatal(err)
	}
	cp, err := Start(assets, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := kubernetes.NewForConfigOrDie(cp.Config).CoreV1().Pods("").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		_ = cp.Stop()
		t.Fatal(err)
	}
	defer w.Stop()
	start := time.Now()
	if err := cp.Stop(); err != nil {
		t.Errorf("stopping the cluster: %v", err)
	}
	if d, limit := time.Since(start), cp.env.ControlPlaneStopTimeout/2; d > limit {
		t.Errorf("the cluster took %v to stop with a watch open, more than %v: the API server waited for the watch", d.Round(time.Second), limit)
	}
}
