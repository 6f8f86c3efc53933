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
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The report of `lmutil lmstat -a`, as lmstat's own format strings print it
// (public copies of FLEXlm's lmstat.c; a whole report is shown in ARM's
// knowledge article "How can I tell how many licenses are in use?",
// http://infocenter.arm.com/help/topic/com.arm.doc.faqs/ka4037.html, and the
// ", N licenses" suffix in the release notes of License Status 3.5). Per
// license server ("License server status: 27000@licsrv") and vendor daemon,
// one line per feature:
//
//	Users of FEATURE:  (Total of N license[s] issued;  Total of M license[s] in use)
//	Users of FEATURE:  (Total of N borrowable licenses issued;  Total of M licenses in use)
//	Users of FEATURE:  (Uncounted, node-locked)
//	Users of FEATURE:  (Error: N licenses, unsupported by licensed server)
//	Users of FEATURE: Cannot get users of FEATURE: <why>
//	Users of FEATURE: None
//
// then, under a counted feature, its "FEATURE" v1.0, vendor: ... header and one
// line per checkout, queued request and reservation:
//
//	    user host display (v1.0) (licsrv/27000 1234), start Mon 11/30 9:12
//	    user host display (v1.0) (licsrv/27000 1234), start Mon 11/30 9:12, 2 licenses
//	    user host display (v1.0) (licsrv/27000 1234), start Mon 11/30 9:12 (linger: 300)
//	    user host display (v1.0) (licsrv/27000 1234) queued for 2 licenses
//	    1 RESERVATION for USER alice (licsrv/27000)
//
// lmstat's in-use count adds up every listed entry but queued ones, so the
// checkouts add up to it or less (reservations are in use but name no
// checkout). A start time has no year and is the local time of the host that
// ran lmstat.

// MaxLMStatBytes caps the report read: 16 MiB is some 200,000 checkout lines.
const MaxLMStatBytes = 16 << 20

// maxLMStatLine caps one line; lmstat's lines are a few hundred bytes.
const maxLMStatLine = 64 << 10

// maxReason caps the text kept in Reading.Unavailable.
const maxReason = 200

var (
	usersOfLine = regexp.MustCompile(`^Users of (\S+):(?:\s+(.*))?$`)
	countedRest = regexp.MustCompile(`^\(Total of (\d+) (?:borrowable )?licenses? issued;\s+Total of (\d+) licenses? in use\)$`)
	// A checkout: two words (user, host), anything, then ", start ".
	checkoutLine = regexp.MustCompile(`^\s+(\S+)\s+([^\s,]+).*?, start (.*)$`)
	startTime    = regexp.MustCompile(`^\S+ (\d{1,2})/(\d{1,2}) (\d{1,2}):(\d{2})\b`)
	// licensesSuffix is anchored after the start time: ", 2 licenses".
	licensesSuffix = regexp.MustCompile(`^\S+ \S+ \S+?, (\d+) licenses?\b`)
)

// lmstatFeature is a counted feature while its report is read.
type lmstatFeature struct {
	Feature
	line      int  // of its last "Users of" line, for messages
	section   int  // the server section that listed it last
	anonymous bool // a section that may be any server listed it
	bad       string
}

// ParseLMStat reads the report of `lmutil lmstat -a` (at most MaxLMStatBytes).
// It returns an error only when the report as a whole cannot be read: too
// large, a line over 64 KiB, or no "Users of" line at all (the server or its
// vendor daemon is down; the error quotes the report's first line that says
// so).
//
// A feature whose line is not a count ("(Error: ...)", "(Uncounted,
// node-locked)", "Cannot get users of", "None", or a form this parser does
// not know), whose numbers are out of range, whose checkouts hold more seats
// than it has in use, or that one server lists twice, is absent from
// Features and named in Unavailable with the reason: unknown, never zero, and
// one odd feature does not blind the driver to the others. A feature that
// several servers list (lmstat -c 27000@a:27000@b) sums their seats and
// checkouts: a client given the same list checks out from any of them.
// InUse is kept as reported, also above Total.
//
// A server counts once, however often the report lists it (-c
// 27000@lic:27000@LIC.example.com, or LM_LICENSE_FILE and a vendor's
// variable that both name it): a "License server status" section that shares
// a key, port@name, with a section before it is skipped whole. Its keys are
// the port@host entries of its status line (a triad's three) and, for the
// host of a "<host>: license server UP" line that the status line does not
// name (the server's own name where -c gave an address), that host at the
// status line's ports. Names are compared lower-cased and by their first DNS
// label (lic = lic.example.com), IP addresses whole. A section whose server
// is unknown (a status line entry that is not port@host, or features before
// any status line) may be any server: a feature that it and another section
// list is unavailable. Both rules err to fewer seats, never to more: two
// servers on one port whose names share a first label count as one.
//
// now is the reading's time and the reference for the year of checkout start
// times, which lmstat prints without one.
func ParseLMStat(r io.Reader, now time.Time) (Reading, error) {
	lr := &io.LimitedReader{R: r, N: MaxLMStatBytes + 1}
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, 4096), maxLMStatLine)

	features := map[string]*lmstatFeature{}
	notCounted := map[string]string{}
	var (
		cur       *lmstatFeature // the counted feature whose checkouts follow, or nil
		section   int
		sec       = newSection(nil)
		seen      = map[string]bool{} // the keys of the servers read
		usersOf   int                 // "Users of" lines seen
		firstBad  string              // the first line that says something is wrong, for the error
		lineNo    int
		sawServer bool
	)
	for sc.Scan() {
		lineNo++
		line := strings.TrimRight(sc.Text(), " \t\r")
		if rest, ok := strings.CutPrefix(line, "License server status:"); ok {
			section++
			sawServer = true
			cur = nil
			sec = newSection(&rest)
			continue
		}
		// Cheap prefix and substring tests first: most lines are neither.
		if m := matchIf(strings.HasPrefix(line, "Users of "), usersOfLine, line); m != nil {
			usersOf++
			cur = nil
			if sec.decide(seen); sec.skip {
				continue
			}
			name, rest := m[1], m[2]
			cm := countedRest.FindStringSubmatch(rest)
			if cm == nil {
				if _, ok := notCounted[name]; !ok {
					if strings.HasPrefix(rest, "(") && strings.HasSuffix(rest, ")") {
						rest = rest[1 : len(rest)-1]
					}
					notCounted[name] = reason(rest)
				}
				continue
			}
			f := features[name]
			switch {
			case f == nil:
				f = &lmstatFeature{line: lineNo, section: section}
				features[name] = f
			case f.section == section:
				f.bad = fmt.Sprintf("listed twice by one license server (lines %d and %d)", f.line, lineNo)
			case (f.anonymous || sec.anonymous) && f.bad == "":
				f.bad = fmt.Sprintf("listed by license servers that cannot be told apart (lines %d and %d)", f.line, lineNo)
			}
			f.line, f.section = lineNo, section
			f.anonymous = f.anonymous || sec.anonymous
			total, err1 := parseCount(cm[1])
			inUse, err2 := parseCount(cm[2])
			if err := errors.Join(err1, err2); err != nil && f.bad == "" {
				f.bad = fmt.Sprintf("line %d: %v", lineNo, err)
			}
			if f.bad != "" {
				continue
			}
			f.Total += total
			f.InUse += inUse
			cur = f
			continue
		}
		if cur != nil {
			if m := matchIf(strings.Contains(line, ", start "), checkoutLine, line); m != nil {
				c, err := parseCheckout(m[1], m[2], m[3], now)
				if err != nil {
					cur.bad = fmt.Sprintf("line %d: %v", lineNo, err)
					cur = nil
					continue
				}
				cur.Checkouts = append(cur.Checkouts, c)
				continue
			}
		}
		sec.sawUP(line)
		// Only a report without features quotes it.
		if usersOf == 0 && firstBad == "" && looksLikeTrouble(line) {
			firstBad = line
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return Reading{}, fmt.Errorf("lmstat report: line %d is longer than %d KiB", lineNo+1, maxLMStatLine>>10)
		}
		return Reading{}, fmt.Errorf("lmstat report: %w", err)
	}
	if lr.N <= 0 {
		return Reading{}, fmt.Errorf("lmstat report is larger than %d MiB, the most read", MaxLMStatBytes>>20)
	}
	if usersOf == 0 {
		switch {
		case firstBad != "":
			return Reading{}, fmt.Errorf("lmstat reported no feature: %q", reason(firstBad))
		case !sawServer:
			return Reading{}, errors.New(`lmstat reported no feature and no "License server status" line: is the command lmutil lmstat -a?`)
		default:
			return Reading{}, errors.New("lmstat reported no feature")
		}
	}

	out := Reading{Features: make(map[string]Feature, len(features)), Time: now}
	unavailable := map[string]string{}
	for name, f := range features {
		if f.bad == "" {
			if msg := checkFeature(&f.Feature); msg != "" {
				f.bad = fmt.Sprintf("line %d: %s", f.line, msg)
			}
		}
		if f.bad != "" {
			unavailable[name] = reason(f.bad)
			continue
		}
		out.Features[name] = f.Feature
	}
	// A feature one server counts and another does not ("unsupported by
	// licensed server") has the seats the first one counts.
	for name, why := range notCounted {
		if _, ok := features[name]; !ok {
			unavailable[name] = why
		}
	}
	if len(unavailable) > 0 {
		out.Unavailable = unavailable
	}
	return out, nil
}

func matchIf(try bool, re *regexp.Regexp, s string) []string {
	if !try {
		return nil
	}
	return re.FindStringSubmatch(s)
}

func parseCount(s string) (int, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > MaxCount {
		return 0, fmt.Errorf("count %s is out of range (0 to %d)", truncate(s, 20), MaxCount)
	}
	return int(n), nil
}

// looksLikeTrouble reports whether a line outside any feature says that the
// server, a vendor daemon or lmstat itself failed.
func looksLikeTrouble(line string) bool {
	l := strings.ToLower(line)
	for _, w := range []string{"error", "cannot", "not running", "down", "refused", "timed out"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

func reason(s string) string {
	return truncate(strings.ToValidUTF8(strings.TrimSpace(s), "?"), maxReason)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "..."
}
