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
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

// section is one server's part of a report: its status line's servers, the
// hosts of its "license server UP" lines, and its feature lines.
func section(servers string, up []string, lines ...string) string {
	var b strings.Builder
	b.WriteString("License server status: " + servers + "\n")
	b.WriteString("    License file(s) on x: /opt/flexlm/x.lic:\n\n")
	for i, h := range up {
		master := ""
		if i == 0 {
			master = " (MASTER)"
		}
		b.WriteString(h + ": license server UP" + master + " v11.19.4\n")
	}
	b.WriteString("\nFeature usage info:\n\n")
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return b.String()
}

const (
	tenSeats = "Users of A:  (Total of 10 licenses issued;  Total of 2 licenses in use)"
	twoSeats = "Users of B:  (Total of 2 licenses issued;  Total of 0 licenses in use)"
	aliceOne = "    alice h1 d (v1) (lic/27000 1), start Thu 1/1 9:00"
	bobOne   = "    bob h2 d (v1) (lic/27000 2), start Thu 1/1 9:30"
)

var tenSeatsRead = Feature{Total: 10, InUse: 2, Checkouts: []Checkout{
	{User: "alice", Host: "h1", Count: 1, Since: at("2026-01-01 09:00")},
	{User: "bob", Host: "h2", Count: 1, Since: at("2026-01-01 09:30")},
}}

// TestParseLMStatServerIdentity: a server that a report lists twice counts
// once; different servers add up; servers that cannot be told apart do not
// add up a feature both list.
func TestParseLMStatServerIdentity(t *testing.T) {
	now := at("2026-01-01 10:00")
	a := []string{tenSeats, aliceOne, bobOne}
	for _, tc := range []struct {
		name            string
		in              string
		wantFeatures    map[string]Feature
		wantUnavailable map[string]string
	}{{
		name:         "the same server twice",
		in:           section("27000@lic", []string{"lic"}, a...) + section("27000@lic", []string{"lic"}, a...),
		wantFeatures: map[string]Feature{"A": tenSeatsRead},
	}, {
		name:         "the same server twice, without UP lines",
		in:           section("27000@lic", nil, a...) + section("27000@lic", nil, a...),
		wantFeatures: map[string]Feature{"A": tenSeatsRead},
	}, {
		name: "the same server with its domain and in another case",
		in: section("27000@lic", []string{"lic"}, a...) +
			section("27000@LIC.Example.COM", []string{"LIC.Example.COM"}, a...) +
			section("27000@Lic.example.com.", []string{"Lic.example.com."}, a...),
		wantFeatures: map[string]Feature{"A": tenSeatsRead},
	}, {
		name: "the duplicate lists what the first does not: it is the same server",
		in: section("27000@lic.example.com", []string{"lic.example.com"}, a...) +
			section("27000@lic", []string{"lic"}, append([]string{twoSeats}, a...)...),
		wantFeatures: map[string]Feature{"A": tenSeatsRead},
	}, {
		name: "a triad twice, in another order and case",
		in: section("27000@lic1,27000@lic2,27000@lic3", []string{"lic1", "lic2", "lic3"}, a...) +
			section("27000@LIC3.example.com, 27000@lic1.example.com, 27000@lic2.example.com", []string{"LIC3.example.com"}, a...),
		wantFeatures: map[string]Feature{"A": tenSeatsRead},
	}, {
		name: "one member of a triad named alone",
		in: section("27000@lic1,27000@lic2,27000@lic3", []string{"lic1", "lic2", "lic3"}, a...) +
			section("27000@lic2", []string{"lic2"}, a...),
		wantFeatures: map[string]Feature{"A": tenSeatsRead},
	}, {
		name: "an address whose server's UP line names a server seen",
		in: section("27000@lic", []string{"lic"}, a...) +
			section("27000@192.0.2.7", []string{"lic.example.com"}, a...),
		wantFeatures: map[string]Feature{"A": tenSeatsRead},
	}, {
		name: "a server seen after its address",
		in: section("27000@192.0.2.7", []string{"lic"}, a...) +
			section("27000@LIC", []string{"LIC"}, a...),
		wantFeatures: map[string]Feature{"A": tenSeatsRead},
	}, {
		name: "two servers on one port add up",
		in: section("27000@lic1", []string{"lic1"}, tenSeats, aliceOne) +
			section("27000@lic2.example.com", []string{"lic2.example.com"}, tenSeats, bobOne),
		wantFeatures: map[string]Feature{"A": {Total: 20, InUse: 4, Checkouts: tenSeatsRead.Checkouts}},
	}, {
		name: "two servers on one host add up",
		in: section("27000@lic", []string{"lic"}, tenSeats, aliceOne) +
			section("27001@lic", []string{"lic"}, tenSeats, bobOne),
		wantFeatures: map[string]Feature{"A": {Total: 20, InUse: 4, Checkouts: tenSeatsRead.Checkouts}},
	}, {
		name: "two addresses are not cut at their first dot",
		in: section("27000@192.0.2.7", []string{"192.0.2.7"}, tenSeats, aliceOne) +
			section("27000@192.0.2.8", []string{"192.0.2.8"}, tenSeats, bobOne),
		wantFeatures: map[string]Feature{"A": {Total: 20, InUse: 4, Checkouts: tenSeatsRead.Checkouts}},
	}, {
		name: "two triads add up",
		in: section("27000@lic1,27000@lic2,27000@lic3", []string{"lic1", "lic2", "lic3"}, tenSeats, aliceOne) +
			section("27000@lic4,27000@lic5,27000@lic6", []string{"lic4", "lic5", "lic6"}, tenSeats, bobOne),
		wantFeatures: map[string]Feature{"A": {Total: 20, InUse: 4, Checkouts: tenSeatsRead.Checkouts}},
	}, {
		name: "a section without a server and another: a feature both list is unknown",
		in: strings.Join(append([]string{twoSeats}, a...), "\n") + "\n" +
			section("27000@lic", []string{"lic"}, a...),
		wantFeatures:    map[string]Feature{"B": {Total: 2}},
		wantUnavailable: map[string]string{"A": "listed by license servers that cannot be told apart (lines 2 and 12)"},
	}, {
		name: "a server that is not port@host",
		in: section("27000@lic", []string{"lic"}, a...) +
			section("/opt/flexlm/licenses/lic.lic", []string{"lic"}, append([]string{twoSeats}, a...)...),
		wantFeatures:    map[string]Feature{"B": {Total: 2}},
		wantUnavailable: map[string]string{"A": "listed by license servers that cannot be told apart (lines 8 and 19)"},
	}, {
		name: "a triad with a member that is not port@host",
		in: section("27000@lic1,lic2,27000@lic3", []string{"lic1"}, a...) +
			section("27000@lic4", []string{"lic4"}, a...),
		wantUnavailable: map[string]string{"A": "listed by license servers that cannot be told apart (lines 8 and 18)"},
	}, {
		name: "a server without a port",
		in: section("@lic", []string{"lic"}, a...) +
			section("@lic", []string{"lic"}, a...),
		wantUnavailable: map[string]string{"A": "listed by license servers that cannot be told apart (lines 8 and 18)"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseLMStat(strings.NewReader(tc.in), now)
			if err != nil {
				t.Fatal(err)
			}
			want := Reading{Features: tc.wantFeatures, Unavailable: tc.wantUnavailable, Time: now}
			if want.Features == nil {
				want.Features = map[string]Feature{}
			}
			if diff := gocmp.Diff(want, got); diff != "" {
				t.Errorf("reading (-want +got):\n%s\nreport:\n%s", diff, tc.in)
			}
		})
	}
}

// fuzzBytes hands out a fuzzer's bytes one at a time, zeros past the end.
type fuzzBytes []byte

func (b *fuzzBytes) next() int {
	if len(*b) == 0 {
		return 0
	}
	c := (*b)[0]
	*b = (*b)[1:]
	return int(c)
}

// fuzzServer is one license server of a fuzzed report.
type fuzzServer struct {
	port  int
	hosts []string // one, or a triad's three; the first label of each
	ips   []string // the hosts' addresses
	body  string   // its feature lines
}

// fuzzServers builds one to four distinct servers from b: a server is on
// host lic0, lic1 or lic2 and port 27000 or 27001 (two servers may share a
// host or a port, never both), or a triad of its own. Each lists up to four
// of the features A to D: counted with up to three checkouts, uncounted, or
// a line of the fuzzer's text.
func fuzzServers(b *fuzzBytes) []fuzzServer {
	var servers []fuzzServer
	taken := map[int]bool{}
	for i := range 1 + b.next()%4 {
		s := fuzzServer{port: 27000 + b.next()%2}
		h := 0
		if b.next()%4 == 3 {
			for m := range 3 {
				s.hosts = append(s.hosts, fmt.Sprintf("tri%d-%d", i, m))
				s.ips = append(s.ips, fmt.Sprintf("198.51.100.%d", 10*i+m))
			}
		} else {
			// Six places (two ports, three hosts), four servers at most.
			place := (s.port-27000)*3 + b.next()%3
			for taken[place] {
				place = (place + 1) % 6
			}
			taken[place] = true
			s.port, h = 27000+place/3, place%3
			s.hosts, s.ips = []string{fmt.Sprintf("lic%d", h)}, []string{fmt.Sprintf("192.0.2.%d", h+1)}
		}
		var body strings.Builder
		for range 1 + b.next()%4 {
			name := string(rune('A' + b.next()%4))
			switch kind := b.next() % 8; kind {
			case 0:
				fmt.Fprintf(&body, "Users of %s:  (Uncounted, node-locked)\n", name)
			case 1:
				// The fuzzer's text, on one line, not a section of its own.
				n := b.next() % 40
				var text []byte
				for range n {
					text = append(text, byte(b.next()))
				}
				line := strings.NewReplacer("\n", " ", "\r", " ").Replace(string(text))
				if !strings.Contains(line, "License server status:") {
					fmt.Fprintf(&body, "Users of %s:  (Total of 3 licenses issued;  Total of 1 license in use)\n%s\n", name, line)
				}
			default:
				fmt.Fprintf(&body, "Users of %s:  (Total of %d licenses issued;  Total of %d licenses in use)\n\n", name, b.next(), b.next()%16)
				for range b.next() % 4 {
					c := 1 + b.next()%3
					fmt.Fprintf(&body, "    u%d h%d d (v1) (%s/%d %d), start Mon 11/30 %d:%02d", b.next()%4, b.next()%4, s.hosts[0], s.port, b.next(), b.next()%24, b.next()%60)
					if c > 1 {
						fmt.Fprintf(&body, ", %d licenses", c)
					}
					body.WriteString("\n")
				}
			}
		}
		s.body = body.String()
		servers = append(servers, s)
	}
	return servers
}

// spell writes s's section, naming its servers as spelling says: 0 as
// they are, 1 with a domain, 2 in upper case with a domain and a final dot,
// 3 by address (the UP lines give the names), 4 without UP lines. A triad's
// members come in an order rot rotates.
func (s fuzzServer) spell(spelling, rot int) string {
	var status, up []string
	for k := range s.hosts {
		m := (k + rot) % len(s.hosts)
		h := s.hosts[m]
		switch spelling {
		case 1:
			h += ".example.com"
		case 2:
			h = strings.ToUpper(h) + ".Example.COM."
		case 3:
			up = append(up, h+".example.com")
			h = s.ips[m]
		}
		status = append(status, fmt.Sprintf("%d@%s", s.port, h))
		if spelling != 3 && spelling != 4 {
			up = append(up, h)
		}
	}
	return section(strings.Join(status, ","), up) + s.body
}

// FuzzParseLMStatServersRepeated checks that a report's counts do not
// depend on how often and in which order it lists its servers: the
// servers fuzzServers builds from servers, each once and as named, read
// the same as when layout repeats them (up to three times, spelled with a
// domain, in upper case, by address) and shuffles them. Same: the features
// counted, their Total, InUse and checkouts (in any order), and the
// features unavailable (their reasons name lines and may differ).
func FuzzParseLMStatServersRepeated(f *testing.F) {
	// servers: count-1; per server: port-27000, 3 for a triad, host
	// (not for a triad), features-1; per feature: name (0 is A), kind (0
	// uncounted, 1 text, else counted); counted: total, in use, checkouts;
	// per checkout: seats-1, user, host, pid, hour, minute; text: length,
	// bytes.
	twoServers := []byte{1,
		0, 0, 0, 1, // 27000@lic0
		0, 2, 10, 3, 2, 1, 0, 0, 7, 9, 0, 0, 1, 1, 8, 9, 30, // A: 10, 3 in use
		1, 0, // B: uncounted
		0, 0, 1, 1, // 27000@lic1
		0, 2, 24, 4, 1, 2, 2, 3, 9, 8, 15, // A: 24, 4 in use
		1, 2, 2, 0, 0, // B: 2, 0 in use
	}
	triad := append([]byte{1,
		0, 3, 0, // 27000@tri0-0,27000@tri0-1,27000@tri0-2
		0, 2, 12, 5, 1, 2, 1, 2, 3, 7, 15, // A: 12, 5 in use
		1, 0, 2, 1, // 27001@lic2
		0, 2, 20, 8, 0, // A: 20, 8 in use
		2, 1, 34, // C: a line of text
	}, "    u9 h9 d, start Mon 11/30 9:00"...)
	oneHostTwoPorts := []byte{1,
		0, 0, 1, 0, // 27000@lic1
		0, 2, 6, 4, 1, 0, 0, 0, 9, 0, 1, // A: 6, 4 in use
		1, 0, 1, 0, // 27001@lic1
		0, 2, 8, 2, 1, 1, 1, 0, 1, 2, 1, // A: 8, 2 in use
	}
	// layout: per server copies-1, per copy its spelling and a triad's
	// rotation; then the shuffle's swaps.
	for _, seed := range []struct{ servers, layout []byte }{
		{twoServers, []byte{1, 0, 0, 1, 0, 0, 0, 1, 1, 0}},
		{twoServers, []byte{2, 2, 0, 3, 0, 4, 0, 1, 3, 0, 1, 0, 3, 2, 1, 0}},
		{triad, []byte{2, 0, 0, 2, 1, 1, 2, 1, 3, 0, 0, 0, 3, 1, 2, 0}},
		{triad, []byte{1, 3, 1, 4, 2, 0, 0, 1}},
		{oneHostTwoPorts, []byte{1, 3, 0, 1, 1, 0, 2, 0, 3, 0, 1, 0, 2, 1}},
		{oneHostTwoPorts, []byte{0, 0, 2, 4, 0, 3, 0, 1, 0, 2, 1}},
	} {
		f.Add(seed.servers, seed.layout)
	}
	now := at("2026-11-30 09:40")
	const header = "lmutil - Copyright (c) 1989-2024 Flexera. All Rights Reserved.\nFlexible License Manager status on Mon 11/30/2026 9:40\n\n[Detecting lmgrd processes...]\n"
	f.Fuzz(func(t *testing.T, servers, layout []byte) {
		sb, lb := fuzzBytes(servers), fuzzBytes(layout)
		list := fuzzServers(&sb)
		once := header
		var copies []string
		for _, s := range list {
			once += s.spell(0, 0)
			for range 1 + lb.next()%3 {
				copies = append(copies, s.spell(lb.next()%5, lb.next()))
			}
		}
		for i := len(copies) - 1; i > 0; i-- {
			j := lb.next() % (i + 1)
			copies[i], copies[j] = copies[j], copies[i]
		}
		repeated := header + strings.Join(copies, "")
		want, wantErr := ParseLMStat(strings.NewReader(once), now)
		got, err := ParseLMStat(strings.NewReader(repeated), now)
		if (wantErr == nil) != (err == nil) {
			t.Fatalf("error %v, want %v\nonce:\n%s\nrepeated:\n%s", err, wantErr, once, repeated)
		}
		if diff := gocmp.Diff(sameCounts(want), sameCounts(got)); diff != "" {
			t.Errorf("reading (-once +repeated):\n%s\nonce:\n%s\nrepeated:\n%s", diff, once, repeated)
		}
	})
}

// sameCounts is r without what may differ between two reports of the same
// servers: the order of checkouts and the reasons of unavailable features.
func sameCounts(r Reading) Reading {
	out := Reading{Features: map[string]Feature{}, Unavailable: map[string]string{}}
	for name, f := range r.Features {
		f.Checkouts = slices.Clone(f.Checkouts)
		slices.SortFunc(f.Checkouts, func(a, b Checkout) int {
			return cmp.Or(strings.Compare(a.User, b.User), strings.Compare(a.Host, b.Host), a.Count-b.Count, a.Since.Compare(b.Since))
		})
		out.Features[name] = f
	}
	for name := range r.Unavailable {
		out.Unavailable[name] = ""
	}
	return out
}
