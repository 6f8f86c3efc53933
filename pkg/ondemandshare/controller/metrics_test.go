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

package controller

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-base/metrics/testutil"
)

// TestMetrics: 10 pods at 30% count 10 decisions, 3 of them on-demand, and
// the workload's gauges say 10 live, 3 on-demand, 3 required; once the
// workload's pods are gone, its series go too.
func TestMetrics(t *testing.T) {
	RegisterMetrics()
	h := newHarness(t, 0, policyArgs("metrics", 30))
	rs := h.replicaSet("web-1", "web")
	all := names("m-", 10)
	for _, n := range all {
		h.pod(n, "metrics", rs)
	}
	before, _ := testutil.GetCounterMetricValue(decisions.WithLabelValues("metrics", "on-demand", ""))
	h.start(1)
	h.waitUngated(all...)
	labels := []string{"metrics", ns, "Deployment/web"}
	h.waitFor("the gauges to show the decisions", func() bool {
		od, err := testutil.GetGaugeMetricValue(workloadOnDemand.WithLabelValues(labels...))
		return err == nil && od == 3
	})
	after, _ := testutil.GetCounterMetricValue(decisions.WithLabelValues("metrics", "on-demand", ""))
	if after-before != 3 {
		t.Errorf("on-demand decisions counted %v, want 3", after-before)
	}
	for name, want := range map[string]float64{"replicas": 10, "required": 3} {
		g := workloadReplicas
		if name == "required" {
			g = workloadRequired
		}
		if got, err := testutil.GetGaugeMetricValue(g.WithLabelValues(labels...)); err != nil || got != want {
			t.Errorf("workload %s gauge %v (%v), want %v", name, got, err, want)
		}
	}

	for _, n := range all {
		if err := h.client.CoreV1().Pods(ns).Delete(context.Background(), n, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	h.waitFor("the workload's series to be dropped", func() bool {
		n, err := testutil.GetGaugeMetricValue(workloadReplicas.WithLabelValues(labels...))
		// WithLabelValues recreates a dropped series at 0.
		return err == nil && n == 0
	})
}
