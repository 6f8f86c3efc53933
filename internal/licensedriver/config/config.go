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

// Package config is the license driver's configuration file: the license
// features to publish, where their seat counts come from, and what to do
// when that source fails. The controller reads all of it (Load); the
// kubelet plugin only the features (LoadNode), so that the manifests give
// it a file without the source and its credentials.
package config

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// APIVersion and Kind identify the file, as a Kubernetes component
	// config does, so that a later version can be told apart.
	APIVersion = "licenses.adminsched.io/v1alpha1"
	Kind       = "LicenseDriverConfiguration"

	// Defaults.
	DefaultPollInterval = 30 * time.Second
	DefaultSettleWindow = 2 * time.Minute
	DefaultStaleAfter   = 5 * time.Minute
	DefaultTimeout      = 10 * time.Second
	DefaultMaxSeats     = 10000
)

// OnStale is what the controller does once the source has not answered for
// staleAfter.
type OnStale string

const (
	// FailClosed stops new allocations: running pods keep their seats, new
	// pods wait until the source answers again. PerSeat publishes only the
	// seats pods hold (and, tainted, the seats numbered below them); Shared
	// taints its device. The default: a
	// license server that cannot be read cannot be checked out from either,
	// so a pod started then would fail at checkout.
	FailClosed OnStale = "FailClosed"
	// Keep goes on serving the last counts read.
	Keep OnStale = "Keep"
)

// Devices is how a feature's seats are published.
type Devices string

const (
	// PerSeat publishes one device per seat: the default, it serves every
	// way of asking (resources.limits of any count, ResourceClaims). The
	// scheduler's DRA Filter reads every device of an allNodes pool for
	// every node, so its cost grows with seats x nodes (doc/performance.md).
	PerSeat Devices = "PerSeat"
	// Shared publishes one device per feature that its claims share, each
	// consuming seats of its "seats" capacity (DRA consumable capacity,
	// beta and on by default in Kubernetes v1.37): scheduling cost no longer
	// grows with the seats. A resources.limits entry then gets one seat per
	// feature at most (it asks for devices, and there is one); a pod that
	// needs more asks with a ResourceClaim: capacity.requests.seats: N.
	Shared Devices = "Shared"
)

// Configuration is the driver's configuration file.
type Configuration struct {
	metav1.TypeMeta `json:",inline"`

	// Features are the license features published as seats, one pool each.
	Features []Feature `json:"features"`
	// Source says where the seat counts come from.
	Source Source `json:"source"`

	// PollInterval is how often the source is read. Default 30s.
	PollInterval metav1.Duration `json:"pollInterval,omitempty"`
	// SettleWindow is how long a pod that was given a seat may take to check
	// it out. Until then its seat is counted as the cluster's even though the
	// server does not list it yet; after it, a checkout the server lists is
	// attributed to the cluster's pods up to the number of seats they hold
	// (see package seats). Default 2m.
	// 0s turns it off: every checkout the server lists is attributed to
	// the pods first.
	SettleWindow *metav1.Duration `json:"settleWindow,omitempty"`
	// StaleAfter is how long the last reading is trusted once the source
	// fails. Default 5m.
	StaleAfter metav1.Duration `json:"staleAfter,omitempty"`
	// OnStale: FailClosed (default) or Keep.
	OnStale OnStale `json:"onStale,omitempty"`
	// Devices: PerSeat (default) or Shared.
	Devices Devices `json:"devices,omitempty"`
	// MaxSeats is the most seats of one feature the driver publishes. A
	// source that reports more for a feature whose seats are not set is
	// taken as broken: the feature fails closed (no new seats; pods keep
	// theirs), with an event and the license_driver_feature_over_limit
	// metric. Default 10000, which the chart's memory limit is sized for;
	// at most 100000.
	MaxSeats int32 `json:"maxSeats,omitempty"`
}

// Feature is one license feature.
type Feature struct {
	// Name is the feature as the license server names it (FlexLM: the
	// name after "Users of"). Required, unique.
	Name string `json:"name"`
	// Pool is the DRA pool of its seats, a DNS subdomain. Default: Name in
	// lower case, with '_' as '-'.
	Pool string `json:"pool,omitempty"`
	// ResourceName is the extended resource pods ask for in
	// resources.limits. Default licenses.adminsched.io/<pool>.
	ResourceName string `json:"resourceName,omitempty"`
	// DeviceClassName is the DeviceClass that maps ResourceName to the
	// pool. Default <pool>.licenses.adminsched.io.
	DeviceClassName string `json:"deviceClassName,omitempty"`
	// Seats is the number of seats, for the static source; other sources
	// report it themselves, and then Seats, when set, caps what they report.
	Seats *int32 `json:"seats,omitempty"`
	// Env is set in every container of a pod that holds a seat, for
	// example LM_LICENSE_FILE: 27000@licsrv.example.com.
	Env map[string]string `json:"env,omitempty"`
}

// Source is exactly one of its fields.
type Source struct {
	// Static serves the features' seats as configured, none in use.
	Static *StaticSource `json:"static,omitempty"`
	// LMStat runs FlexLM's lmutil lmstat -a and reads its report.
	LMStat *LMStatSource `json:"lmstat,omitempty"`
	// HTTP reads a JSON document over HTTP(S).
	HTTP *HTTPSource `json:"http,omitempty"`
}

// StaticSource has no settings: the seats are Feature.Seats.
type StaticSource struct{}

// LMStatSource runs a command that prints lmstat's report.
type LMStatSource struct {
	// Command and its arguments, for example
	// ["lmutil", "lmstat", "-a", "-c", "27000@licsrv"]. Run without a shell.
	Command []string `json:"command"`
	// Timeout of one run. Default 10s.
	Timeout metav1.Duration `json:"timeout,omitempty"`
}

// HTTPSource reads a JSON document of the form
//
//	{"features": [{"name": "MATLAB", "total": 10, "inUse": 3,
//	  "checkouts": [{"user": "ana", "host": "ws12", "count": 1, "since": "2026-12-01T09:12:00Z"}]}]}
//
// (checkouts optional; see source.ParseJSON).
type HTTPSource struct {
	// URL to GET, http or https.
	URL string `json:"url"`
	// Timeout of one request. Default 10s.
	Timeout metav1.Duration `json:"timeout,omitempty"`
	// CAFile is the path of a PEM bundle of the certificate authorities
	// the https server's certificate must chain to, instead of the
	// system's. Optional; only with an https URL. Read at start.
	CAFile string `json:"caFile,omitempty"`
}
