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

// Package source reads how many seats of each license feature a license
// server has issued and how many are checked out.
//
// Three sources, one per kind of config.Source, built by New: Static (the
// configured seats, none in use), LMStat (FlexLM's lmutil lmstat -a, parsed
// by ParseLMStat) and HTTP (a JSON document, parsed by ParseJSON). The
// parsers are pure functions of their input, bounded in what they read,
// and fuzzed. A source reports what the server says: InUse may exceed
// Total, and a configured Feature.Seats cap is applied by the controller,
// not here.
package source

import (
	"context"
	"math"
	"time"
)

// Source reads the license server. Read is called from one goroutine at a
// time, every poll interval; it must honour ctx's deadline.
type Source interface {
	// Read returns the state of every feature the server reports. A feature
	// the server does not report is absent from the map (the driver then
	// treats its seats as unknown, not as zero).
	Read(ctx context.Context) (Reading, error)
}

// Reading is one answer of a license server.
type Reading struct {
	// Features by feature name, as the license server spells it.
	Features map[string]Feature
	// Time is when the server answered.
	Time time.Time
	// Unavailable are the features the server named but gave no usable
	// count for, with the reason (lmstat's "(Error: 5 licenses, unsupported
	// by licensed server)", "(Uncounted, node-locked)", or counts that
	// contradict each other). They are absent from Features: unknown, not
	// zero. For logs and events; nil when there are none.
	Unavailable map[string]string
}

// Feature is the state of one license feature.
type Feature struct {
	// Total is the number of seats issued.
	Total int
	// InUse is the number of seats checked out, by the cluster's pods and
	// by anyone else. It can exceed Total, as the server reports it (an
	// overdraft, or a license file reread with fewer seats while the old
	// checkouts last): then no seat is free. Sources do not clamp it.
	InUse int
	// Checkouts are the individual checkouts, when the server lists them
	// (FlexLM does, a bare count does not). Their counts add up to InUse
	// or less (a server may list only part of them).
	Checkouts []Checkout
}

// MaxCount bounds every count a source reports (Total, InUse, a checkout's
// Count): a larger number is a parse error, not a wrapped integer.
const MaxCount = math.MaxInt32

// Checkout is one checkout of a feature's seats.
type Checkout struct {
	User, Host string
	// Count is the number of seats it holds (at least 1).
	Count int
	// Since is when it was checked out, zero when unknown.
	Since time.Time
}
