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

package podcount

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSlotSequenceLock checks the slot's sequence lock step by step, as the
// interleavings of parallel Score calls would drive it. Each step guards one
// part of the protocol that a sequential count cannot see: a reader must
// reject a memo while a writer stores it (odd sequence) or once a write
// happened since it began (the sequence moved), and a second writer must back
// off instead of storing over the first.
func TestSlotSequenceLock(t *testing.T) {
	type memo struct {
		Generation      int64
		Base, BaseCount int
		OK              bool
	}
	read := func(s *slot) memo {
		g, b, c, ok := s.read()
		return memo{g, b, c, ok}
	}
	tests := []struct {
		name string
		// run drives a fresh slot and returns what a reader gets.
		run  func(t *testing.T, s *slot) memo
		want memo
	}{
		{
			name: "a write is read back",
			run: func(t *testing.T, s *slot) memo {
				s.write(7, 3, 2)
				return read(s)
			},
			want: memo{Generation: 7, Base: 3, BaseCount: 2, OK: true},
		},
		{
			name: "a second write replaces the first",
			run: func(t *testing.T, s *slot) memo {
				s.write(7, 3, 2)
				s.write(8, 4, 1)
				return read(s)
			},
			want: memo{Generation: 8, Base: 4, BaseCount: 1, OK: true},
		},
		{
			name: "a reader rejects the memo while a writer holds the slot",
			run: func(t *testing.T, s *slot) memo {
				s.write(7, 3, 2)
				s.seq.Add(1) // a writer has begun
				m := read(s)
				m.Generation, m.Base, m.BaseCount = 0, 0, 0 // whatever it read
				return m
			},
			want: memo{OK: false},
		},
		{
			name: "a writer backs off while another holds the slot",
			run: func(t *testing.T, s *slot) memo {
				s.write(7, 3, 2)
				s.seq.Add(1) // another writer has begun
				s.write(9, 9, 9)
				s.seq.Add(1) // and ends without storing
				return read(s)
			},
			want: memo{Generation: 7, Base: 3, BaseCount: 2, OK: true},
		},
		{
			name: "every write moves the sequence on",
			run: func(t *testing.T, s *slot) memo {
				for i := range 3 {
					before := s.seq.Load()
					s.write(int64(i), i, i)
					// A reader that loaded before this write and checks after
					// it must see another sequence number, or it would accept
					// values torn between two writes.
					if after := s.seq.Load(); after == before || after%2 != 0 {
						t.Errorf("write %d: sequence %d -> %d, want a different even number", i, before, after)
					}
				}
				return read(s)
			},
			want: memo{Generation: 2, Base: 2, BaseCount: 2, OK: true},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.run(t, &slot{})); diff != "" {
				t.Errorf("read (-want, +got):\n%s", diff)
			}
		})
	}
}
