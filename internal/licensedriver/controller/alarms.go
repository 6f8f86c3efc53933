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
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
)

// checkLimit raises or clears the alarm of a feature whose reported total
// is over maxSeats: the feature then fails closed, as a source that cannot
// be trusted.
func (c *controller) checkLimit(ctx context.Context, f config.Feature, over bool, reported int) {
	if over == c.overLimit[f.Pool] {
		return
	}
	c.overLimit[f.Pool] = over
	logger := klog.FromContext(ctx)
	if over {
		featureOverLimit.WithLabelValues(f.Pool).Set(1)
		logger.Error(nil, "The license server reports more seats than maxSeats: no new seat is offered until it reports fewer, or maxSeats or the feature's seats is set",
			"feature", f.Name, "reported", reported, "maxSeats", c.Config.MaxSeats)
		c.featureEvent(f, corev1.EventTypeWarning, ReasonOverLimit,
			"The license server reports %d seats of %q, more than maxSeats (%d): no new seat is offered; raise maxSeats (at most %d) or set the feature's seats",
			reported, f.Name, c.Config.MaxSeats, config.MaxSeats)
		return
	}
	featureOverLimit.WithLabelValues(f.Pool).Set(0)
	logger.Info("The license server's total is within maxSeats again", "feature", f.Name, "reported", reported)
	c.featureEvent(f, corev1.EventTypeNormal, ReasonWithinLimit, "The license server's total of %q is within maxSeats again", f.Name)
}

// checkHeldTwice raises or clears the alarm of a pool one of whose seats is
// held by two claims: two schedulers allocated from the pool at once
// (kubernetes/kubernetes#128980). The driver cannot undo an allocation; it
// says so, so that an operator moves seat pods to one scheduler.
func (c *controller) checkHeldTwice(ctx context.Context, f config.Feature, doubles map[string][]string) {
	heldTwice.WithLabelValues(f.Pool).Set(float64(len(doubles)))
	twice := len(doubles) > 0
	if twice == c.heldTwice[f.Pool] {
		return
	}
	c.heldTwice[f.Pool] = twice
	if !twice {
		return
	}
	var which []string
	for _, device := range slices.Sorted(maps.Keys(doubles)) {
		which = append(which, device+" by "+strings.Join(doubles[device], " and "))
	}
	klog.FromContext(ctx).Error(nil, "A seat is held by two claims: two schedulers allocate from this pool; let one scheduler place the pods that ask for seats",
		"pool", f.Pool, "seats", which)
	c.featureEvent(f, corev1.EventTypeWarning, ReasonHeldTwice,
		"Seats held by two claims (%s): two schedulers allocate from pool %s; let one scheduler place the pods that ask for seats",
		strings.Join(which, "; "), f.Pool)
}
