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

package source

import (
	"fmt"
	"strconv"
	"time"
)

// checkFeature returns what is wrong with f's counts, or "".
func checkFeature(f *Feature) string {
	if f.Total > MaxCount || f.InUse > MaxCount {
		return fmt.Sprintf("the servers' counts add up to more than %d", MaxCount)
	}
	held := 0
	for _, c := range f.Checkouts {
		held += c.Count
		if held > f.InUse {
			return fmt.Sprintf("its checkouts hold more seats than the %d in use", f.InUse)
		}
	}
	return ""
}

// parseCheckout reads a checkout line's user, host and what follows ", start ".
func parseCheckout(user, host, tail string, now time.Time) (Checkout, error) {
	c := Checkout{User: user, Host: host, Count: 1}
	if m := licensesSuffix.FindStringSubmatch(tail); m != nil {
		n, err := parseCount(m[1])
		if err != nil {
			return Checkout{}, err
		}
		if n < 1 {
			return Checkout{}, fmt.Errorf("checkout of %s holds %d licenses", user, n)
		}
		c.Count = n
	}
	if m := startTime.FindStringSubmatch(tail); m != nil {
		// The digits are at most two long: Atoi cannot fail.
		mo, _ := strconv.Atoi(m[1])
		d, _ := strconv.Atoi(m[2])
		h, _ := strconv.Atoi(m[3])
		mi, _ := strconv.Atoi(m[4])
		c.Since = startOf(mo, d, h, mi, now)
	}
	return c, nil
}

// startOf returns the time lmstat printed as M/D H:MM: the latest such time
// not more than a day after now (a day of slack for clocks and time zones),
// zero when there is none (13/40, 25:00, 2/30).
func startOf(month, day, hour, minute int, now time.Time) time.Time {
	if month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 {
		return time.Time{}
	}
	// February 29 recurs within eight years (2096, then 2104).
	for y := now.Year(); y >= now.Year()-8; y-- {
		t := time.Date(y, time.Month(month), day, hour, minute, 0, 0, now.Location())
		if t.Month() != time.Month(month) || t.After(now.Add(24*time.Hour)) {
			continue
		}
		return t
	}
	return time.Time{}
}
