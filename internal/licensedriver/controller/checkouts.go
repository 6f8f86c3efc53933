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
	"strings"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver/source"
)

// clusterCheckouts counts the seats of a pool's checkouts that the pods of
// its claims made, from the host names the license server lists: every
// other checkout is someone else's.
//
// A container's host name is its pod's name (cut to 63 characters), so a
// checkout is a pod's when its host is that name, in any letter case, or
// that name followed by domain labels one of which is the pod's namespace
// (a fully qualified pod name). A desktop build-1.corp.example.com is not
// the pod build-1. A claim is given at most the seats it holds, and a
// checkout at most once: a desktop named as a pod, pods that share one
// claim, a checkout that lingers or holds several licenses never make more
// seats the cluster's than its claims hold, so they never raise the seats
// offered. Errors only towards fewer free seats: a pod whose checkout shows
// another host is counted outside.
func clusterCheckouts(checkouts []source.Checkout, claims []poolClaim) int {
	byFirst := map[string][]*checkoutHost{} // by first label
	for _, c := range checkouts {
		name := strings.ToLower(c.Host)
		first, _, _ := strings.Cut(name, ".")
		var h *checkoutHost
		for _, seen := range byFirst[first] {
			if seen.name == name {
				h = seen
			}
		}
		if h == nil {
			h = &checkoutHost{name: name}
			byFirst[first] = append(byFirst[first], h)
		}
		h.left += max(1, c.Count)
	}
	n := 0
	for _, cl := range claims {
		left := cl.seats
		for _, pod := range cl.pods {
			hostname := podHostname(pod)
			for _, h := range byFirst[hostname] {
				if left == 0 {
					break
				}
				if h.left == 0 || !h.isPod(hostname, cl.namespace) {
					continue
				}
				take := min(left, h.left)
				h.left -= take
				left -= take
				n += take
			}
		}
	}
	return n
}

// checkoutHost is a host that checked out seats.
type checkoutHost struct {
	name string // lower case
	left int    // seats not yet given to a claim
}

// isPod reports whether the host is the pod with the given host name in
// namespace: the name itself, or the name and domain labels of which one is
// the namespace.
func (h *checkoutHost) isPod(hostname, namespace string) bool {
	if h.name == hostname {
		return true
	}
	rest, ok := strings.CutPrefix(h.name, hostname+".")
	if !ok {
		return false
	}
	for label := range strings.SplitSeq(rest, ".") {
		if label == namespace {
			return true
		}
	}
	return false
}

// podHostname is the host name a pod's containers see, in lower case: its
// name, cut to 63 characters without a trailing '-' or '.' (as the kubelet
// does).
func podHostname(pod string) string {
	if len(pod) > 63 {
		pod = strings.TrimRight(pod[:63], "-.")
	}
	return strings.ToLower(pod)
}
