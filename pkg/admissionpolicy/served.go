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

package admissionpolicy

import (
	"fmt"
	"regexp"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

// Served is the admissionregistration.k8s.io version at which a
// kube-apiserver serves MutatingAdmissionPolicy, and what it takes to turn
// it on there.
type Served struct {
	// Minor is the Kubernetes minor, 37 for 1.37.
	Minor int
	// Version is the API version: v1 from 1.36, v1beta1 in 1.35.
	Version string
	// Enable, when not empty, is what the API server needs for it.
	Enable string
}

// OldestMinor is the oldest minor upstream supports and renders for.
const OldestMinor = 35

// ServedBy returns how a kube-apiserver of Kubernetes 1.<minor> serves
// MutatingAdmissionPolicy. newest is the minor the caller is built from: a
// kube-apiserver may be one minor newer than the scheduler, not more.
func ServedBy(minor, newest int) (Served, error) {
	switch {
	case minor < OldestMinor:
		return Served{}, fmt.Errorf("Kubernetes 1.%d: renders for 1.%d to 1.%d (the minors upstream supports; MutatingAdmissionPolicy is v1beta1 from 1.34, v1 from 1.36)", minor, OldestMinor, newest+1)
	case minor > newest+1:
		return Served{}, fmt.Errorf("Kubernetes 1.%d: renders for 1.%d to 1.%d; this build knows the API of 1.%d, and a kube-apiserver may be one minor newer than the scheduler", minor, OldestMinor, newest+1, newest)
	case minor == 35:
		return Served{Minor: minor, Version: "v1beta1",
			Enable: "the feature gate MutatingAdmissionPolicy=true and --runtime-config=admissionregistration.k8s.io/v1beta1=true on every kube-apiserver (beta, off by default in 1.35)"}, nil
	}
	return Served{Minor: minor, Version: "v1"}, nil
}

// Comment is the line a rendered file's header holds for an API server that
// serves the policies only when switched on; empty otherwise.
func (s Served) Comment() string {
	if s.Enable == "" {
		return ""
	}
	return fmt.Sprintf("For Kubernetes 1.%d, which serves them as %s with %s.", s.Minor, s.Version, s.Enable)
}

// notServedHint says, after err, what an API server of this build's minor
// needs to serve the policies, when err may be that it does not: 1.35
// serves them only when switched on.
func notServedHint(err error) string {
	served, _ := ServedBy(kubeversion.Minor, kubeversion.Minor)
	if served.Enable == "" || !apierrors.IsNotFound(err) {
		return ""
	}
	return fmt.Sprintf(" (Kubernetes 1.%d serves MutatingAdmissionPolicy as %s only with %s)", served.Minor, served.Version, served.Enable)
}

// kubeVersionFlag is what --kube-version takes: 1.36, v1.36 or v1.36.3.
var kubeVersionFlag = regexp.MustCompile(`^v?1\.([0-9]+)(\.[0-9]+)?$`)

// ParseKubeVersion reads a --kube-version flag: how the kube-apiservers of
// that version serve the policies.
func ParseKubeVersion(version string) (Served, error) {
	m := kubeVersionFlag.FindStringSubmatch(version)
	if m == nil {
		return Served{}, fmt.Errorf("--kube-version %q: want a Kubernetes version such as 1.36 or v1.36.3", version)
	}
	minor, err := strconv.Atoi(m[1])
	if err != nil {
		return Served{}, fmt.Errorf("--kube-version %q: %w", version, err)
	}
	served, err := ServedBy(minor, kubeversion.Minor)
	if err != nil {
		return Served{}, fmt.Errorf("--kube-version %q: %w", version, err)
	}
	return served, nil
}

// CheckFailurePolicy returns fp, Ignore when empty, or an error naming the
// values it may take.
func CheckFailurePolicy(fp FailurePolicyType) (FailurePolicyType, error) {
	if fp == "" {
		return Ignore, nil
	}
	if fp != Ignore && fp != Fail {
		return "", badFailurePolicy("failure policy", fp)
	}
	return fp, nil
}

func badFailurePolicy(what string, fp FailurePolicyType) error {
	return fmt.Errorf("%s %q: must be %s or %s", what, fp, Ignore, Fail)
}
