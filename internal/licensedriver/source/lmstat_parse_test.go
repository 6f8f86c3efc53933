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
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func at(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04", s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestParseLMStatFiles(t *testing.T) {
	for _, tc := range []struct {
		file    string
		now     time.Time
		want    Reading
		wantErr string
	}{{
		file: "lmstat-matlab.txt",
		now:  at("2026-11-30 09:40"),
		want: Reading{
			Features: map[string]Feature{
				"MATLAB": {Total: 10, InUse: 3, Checkouts: []Checkout{
					{User: "alice", Host: "node-7.cluster.example.com", Count: 1, Since: at("2026-11-30 09:12")},
					{User: "bob", Host: "ws-bob.example.com", Count: 2, Since: at("2026-11-29 22:05")},
				}},
				// carol's lingering checkout counts; dave's queued request does not.
				"SIMULINK": {Total: 5, InUse: 1, Checkouts: []Checkout{
					{User: "carol", Host: "ws-carol.example.com", Count: 1, Since: at("2026-11-30 08:01")},
				}},
				"Distrib_Computing_Toolbox": {Total: 1},
				// erin's reservation is in use but names no checkout.
				"Statistics_Toolbox": {Total: 4, InUse: 2, Checkouts: []Checkout{
					{User: "alice", Host: "node-7.cluster.example.com", Count: 1, Since: at("2026-11-30 09:12")},
				}},
			},
			Unavailable: map[string]string{"Signal_Toolbox": "Error: 5 licenses, unsupported by licensed server"},
		},
	}, {
		file: "lmstat-two-servers.txt",
		now:  at("2026-03-03 14:02"),
		want: Reading{
			Features: map[string]Feature{
				// Both servers serve it: 40+24 seats, 36+4 in use.
				"VCSRuntime_Net": {Total: 64, InUse: 40, Checkouts: []Checkout{
					{User: "sim01", Host: "node-12.hpc.example.com", Count: 16, Since: at("2026-03-03 11:20")},
					{User: "sim02", Host: "node-13.hpc.example.com", Count: 20, Since: at("2026-03-03 13:58")},
					{User: "sim03", Host: "node-40.hpc.example.com", Count: 4, Since: at("2026-03-03 12:00")},
				}},
				"Design-Compiler": {Total: 2, InUse: 2, Checkouts: []Checkout{
					{User: "frank", Host: "ws-frank.example.com", Count: 1, Since: at("2026-03-02 17:45")},
					{User: "grace", Host: "ws-grace.example.com", Count: 1, Since: at("2026-03-03 08:30")},
				}},
				"Formality": {Total: 1},
			},
			Unavailable: map[string]string{
				"dc_ultra":  "Uncounted, node-locked",
				"PrimeTime": "Cannot get users of PrimeTime: No such feature exists. (-5,222)",
			},
		},
	}, {
		// lmutil lmstat -a -c 27000@lic:27000@LIC.example.com: one server, twice.
		file: "lmstat-same-server-twice.txt",
		now:  at("2026-03-03 14:02"),
		want: Reading{
			Features: map[string]Feature{
				"cfd_base": {Total: 10, InUse: 2, Checkouts: []Checkout{
					{User: "sim01", Host: "node-12.hpc.example.com", Count: 1, Since: at("2026-03-03 11:20")},
					{User: "sim02", Host: "node-13.hpc.example.com", Count: 1, Since: at("2026-03-03 13:58")},
				}},
			},
			Unavailable: map[string]string{"cfd_solve_level1": "Uncounted, node-locked"},
		},
	}, {
		file:    "lmstat-server-down.txt",
		now:     at("2026-11-30 09:40"),
		wantErr: `lmstat reported no feature: "lmgrd is not running: License server machine is down or not responding. (-96,7:11001 \"\")"`,
	}, {
		file:    "lmstat-vendor-down.txt",
		now:     at("2026-01-07 10:15"),
		wantErr: `lmstat reported no feature: "ansyslmd: The desired vendor daemon is down. (-97,121)"`,
	}} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseLMStat(bytes.NewReader(data), tc.now)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if tc.wantErr != "" {
				return
			}
			tc.want.Time = tc.now
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("reading (-want +got):\n%s", diff)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

const server = "License server status: 27000@licsrv\n"

func TestParseLMStat(t *testing.T) {
	now := at("2026-01-01 10:00")
	for _, tc := range []struct {
		name            string
		in              string
		wantFeatures    map[string]Feature
		wantUnavailable map[string]string
		wantErr         string
	}{{
		name:         "singular words",
		in:           server + "Users of A:  (Total of 1 license issued;  Total of 1 license in use)\n",
		wantFeatures: map[string]Feature{"A": {Total: 1, InUse: 1}},
	}, {
		name:         "single spaces, CRLF, trailing blanks",
		in:           server + "Users of A: (Total of 3 licenses issued; Total of 0 licenses in use)  \r\n",
		wantFeatures: map[string]Feature{"A": {Total: 3}},
	}, {
		name:         "a colon in the name",
		in:           server + "Users of VENDOR:FEAT:  (Total of 3 licenses issued;  Total of 0 licenses in use)\n",
		wantFeatures: map[string]Feature{"VENDOR:FEAT": {Total: 3}},
	}, {
		name:         "in use above total is kept",
		in:           server + "Users of A:  (Total of 2 licenses issued;  Total of 5 licenses in use)\n",
		wantFeatures: map[string]Feature{"A": {Total: 2, InUse: 5}},
	}, {
		name: "a start without a year: the last such time before now",
		in: server + "Users of A:  (Total of 9 licenses issued;  Total of 4 licenses in use)\n" +
			"    u1 h1 d (v1) (licsrv/27000 1), start Wed 12/31 23:50\n" +
			"    u2 h2 d (v1) (licsrv/27000 2), start Thu 1/1 9:59\n" +
			"    u3 h3 d (v1) (licsrv/27000 3), start Sat 2/29 8:00\n" +
			"    u4 h4 d (v1) (licsrv/27000 4), start Xyz 13/40 25:99\n",
		wantFeatures: map[string]Feature{"A": {Total: 9, InUse: 4, Checkouts: []Checkout{
			{User: "u1", Host: "h1", Count: 1, Since: at("2025-12-31 23:50")},
			{User: "u2", Host: "h2", Count: 1, Since: at("2026-01-01 09:59")},
			{User: "u3", Host: "h3", Count: 1, Since: at("2024-02-29 08:00")},
			{User: "u4", Host: "h4", Count: 1},
		}}},
	}, {
		name: "checkouts before any feature and under an uncounted one are not counted",
		in: server + "    u1 h1 d (v1) (licsrv/27000 1), start Thu 1/1 9:00\n" +
			"Users of N:  (Uncounted, node-locked)\n" +
			"    u2 h2 d (v1), start Thu 1/1 9:00\n" +
			"Users of A:  (Total of 1 license issued;  Total of 0 licenses in use)\n",
		wantFeatures:    map[string]Feature{"A": {Total: 1}},
		wantUnavailable: map[string]string{"N": "Uncounted, node-locked"},
	}, {
		name: "checkouts holding more than in use",
		in: server + "Users of A:  (Total of 5 licenses issued;  Total of 2 licenses in use)\n" +
			"    u1 h1 d (v1) (licsrv/27000 1), start Thu 1/1 9:00, 3 licenses\n" +
			"Users of B:  (Total of 5 licenses issued;  Total of 0 licenses in use)\n",
		wantFeatures:    map[string]Feature{"B": {Total: 5}},
		wantUnavailable: map[string]string{"A": "line 2: its checkouts hold more seats than the 2 in use"},
	}, {
		name: "counts out of range",
		in: server + "Users of A:  (Total of 2147483648 licenses issued;  Total of 0 licenses in use)\n" +
			"Users of B:  (Total of 5 licenses issued;  Total of 99999999999999999999999 licenses in use)\n" +
			"Users of C:  (Total of 5 licenses issued;  Total of 5 licenses in use)\n" +
			"    u1 h1 d (v1) (licsrv/27000 1), start Thu 1/1 9:00, 9999999999 licenses\n" +
			"Users of D:  (Total of 5 licenses issued;  Total of 5 licenses in use)\n" +
			"    u1 h1 d (v1) (licsrv/27000 1), start Thu 1/1 9:00, 0 licenses\n",
		wantUnavailable: map[string]string{
			"A": "line 2: count 2147483648 is out of range (0 to 2147483647)",
			"B": "line 3: count 99999999999999999999... is out of range (0 to 2147483647)",
			"C": "line 5: count 9999999999 is out of range (0 to 2147483647)",
			"D": "line 7: checkout of u1 holds 0 licenses",
		},
	}, {
		name: "one server lists a feature twice",
		in: server + "Users of A:  (Total of 5 licenses issued;  Total of 0 licenses in use)\n" +
			"Users of A:  (Total of 3 licenses issued;  Total of 0 licenses in use)\n",
		wantUnavailable: map[string]string{"A": "listed twice by one license server (lines 2 and 3)"},
	}, {
		name: "a feature counted by one server, unsupported by another",
		in: server + "Users of A:  (Error: 5 licenses, unsupported by licensed server)\n" +
			"License server status: 27000@licsrv2\n" + "Users of A:  (Total of 3 licenses issued;  Total of 1 license in use)\n",
		wantFeatures: map[string]Feature{"A": {Total: 3, InUse: 1}},
	}, {
		name:            "a form this parser does not know",
		in:              server + "Users of A:  (Total of many licenses issued)\nUsers of B:\n",
		wantUnavailable: map[string]string{"A": "Total of many licenses issued", "B": ""},
	}, {
		name:    "nothing at all",
		in:      "",
		wantErr: `lmstat reported no feature and no "License server status" line: is the command lmutil lmstat -a?`,
	}, {
		name:    "a server and no feature",
		in:      server + "\nFeature usage info:\n",
		wantErr: "lmstat reported no feature",
	}, {
		name:    "lmutil's connection error",
		in:      "Error getting status: Cannot connect to license server system. (-15,570:111 \"Connection refused\")\n",
		wantErr: `lmstat reported no feature: "Error getting status: Cannot connect to license server system. (-15,570:111 \"Connection refused\")"`,
	}, {
		name:    "a line over 64 KiB",
		in:      server + "Users of A:  (Total of 1 license issued;  Total of 0 licenses in use)\n" + strings.Repeat("x", 64<<10+1) + "\n",
		wantErr: "lmstat report: line 3 is longer than 64 KiB",
	}, {
		name:    "a report over 16 MiB",
		in:      server + strings.Repeat("Users of A:  (Total of 1 license issued;  Total of 0 licenses in use)\n", MaxLMStatBytes/64),
		wantErr: "lmstat report is larger than 16 MiB, the most read",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseLMStat(strings.NewReader(tc.in), now)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if tc.wantErr != "" {
				return
			}
			want := Reading{Features: tc.wantFeatures, Unavailable: tc.wantUnavailable, Time: now}
			if want.Features == nil {
				want.Features = map[string]Feature{}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("reading (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzParseLMStat checks what every reading must hold, whatever the report:
// no panic; counts in range; checkouts that hold at least one seat each and
// no more than InUse together; no feature both counted and unavailable;
// reasons short and printable; the same answer twice. InUse above Total is
// allowed (kept as the server says). The seeds, the recorded reports, run in
// every go test.
func FuzzParseLMStat(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "lmstat-*.txt"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(server + "Users of A:  (Total of 1 license issued;  Total of 5 licenses in use)\n    u h d, start Sat 2/29 8:00, 2 licenses\n"))
	f.Add([]byte(server + "Users of A:  (Total of 5 licenses issued;  Total of 1 license in use)\n    u h d, start Mon 11/30 9:00, 3 licenses\n"))
	now := at("2026-11-30 09:40")
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ParseLMStat(bytes.NewReader(data), now)
		if err != nil {
			return
		}
		if !got.Time.Equal(now) {
			t.Errorf("time %v, want %v", got.Time, now)
		}
		for name, ft := range got.Features {
			if ft.Total < 0 || ft.Total > MaxCount || ft.InUse < 0 || ft.InUse > MaxCount {
				t.Errorf("feature %q: total %d, in use %d: out of range", name, ft.Total, ft.InUse)
			}
			held := 0
			for _, c := range ft.Checkouts {
				if c.Count < 1 {
					t.Errorf("feature %q: checkout %+v holds fewer than 1 seat", name, c)
				}
				if c.Since.After(now.Add(24 * time.Hour)) {
					t.Errorf("feature %q: checkout %+v starts after now", name, c)
				}
				held += c.Count
			}
			if held > ft.InUse {
				t.Errorf("feature %q: checkouts hold %d seats, more than the %d in use", name, held, ft.InUse)
			}
			if _, both := got.Unavailable[name]; both {
				t.Errorf("feature %q is counted and unavailable", name)
			}
		}
		for name, why := range got.Unavailable {
			if len(why) > maxReason+3 || !utf8.ValidString(why) {
				t.Errorf("feature %q: reason %q is too long or not UTF-8", name, why)
			}
		}
		again, err := ParseLMStat(bytes.NewReader(data), now)
		if err != nil {
			t.Fatalf("second parse: %v", err)
		}
		if diff := cmp.Diff(got, again); diff != "" {
			t.Errorf("second parse differs (-first +second):\n%s", diff)
		}
	})
}

// lmstatReport is a report of features features with checkouts checkouts
// each, some of two seats.
func lmstatReport(features, checkouts int) []byte {
	var b bytes.Buffer
	b.WriteString(server + "\nFeature usage info:\n\n")
	for i := range features {
		fmt.Fprintf(&b, "Users of FEATURE_%d:  (Total of %d licenses issued;  Total of %d licenses in use)\n\n", i, 2*checkouts, checkouts+checkouts/2)
		fmt.Fprintf(&b, "  \"FEATURE_%d\" v2026.03, vendor: vendord, expiry: 30-jun-2027\n  floating license\n\n", i)
		for j := range checkouts {
			fmt.Fprintf(&b, "    user%d node-%d.hpc.example.com /dev/pts/%d (v2026.03) (licsrv/27000 %d), start Mon 11/30 9:%02d", j, j, j%8, 100+j, j%60)
			if j%2 == 1 {
				b.WriteString(", 2 licenses")
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	return b.Bytes()
}

// BenchmarkParseLMStat parses a report of 1,000 features with 10 checkouts
// each (15,000 seats in use).
func BenchmarkParseLMStat(b *testing.B) {
	data := lmstatReport(1000, 10)
	now := at("2026-11-30 09:40")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := ParseLMStat(bytes.NewReader(data), now)
		if err != nil || len(r.Features) != 1000 {
			b.Fatalf("%d features, %v", len(r.Features), err)
		}
	}
}
