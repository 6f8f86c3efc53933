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
package source

import (
	"context"
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
}

// Feature is the state of one license feature.
type Feature struct {
	// Total is the number of seats issued.
	Total int
	// InUse is the number of seats checked out, by the cluster's pods and
	// by anyone else.
	InUse int
	// Checkouts are the individual checkouts, when the server lists them
	// (FlexLM does, a bare count does not). Their counts add up to InUse
	// or less (a server may list only part of them).
	Checkouts []Checkout
}

// Checkout is one checkout of a feature's seats.
type Checkout struct {
	User, Host string
	// Count is the number of seats it holds (at least 1).
	Count int
	// Since is when it was checked out, zero when unknown.
	Since time.Time
}
