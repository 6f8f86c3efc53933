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
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The server identity of a report's sections; ParseLMStat's doc comment
// gives the rule.

// upLine is the line the server prints for itself: "lic: license server UP (MASTER) v11.19".
var upLine = regexp.MustCompile(`^(\S+): license server UP\b`)

// lmstatSection is one "License server status" section while it is read.
type lmstatSection struct {
	ports, names []string // of the status line's port@host entries
	aliases      []string // hosts of UP lines
	unknown      bool     // an entry of the status line is not port@host, or there is no status line
	decided      bool     // its first "Users of" line was read: the fields below hold
	skip         bool     // a section before it had one of its keys: the same server
	anonymous    bool     // unknown, and no key seen before: it may be any server
}

// newSection reads the rest of a "License server status:" line. A nil rest
// is the part of a report before any status line.
func newSection(rest *string) *lmstatSection {
	s := &lmstatSection{}
	if rest == nil {
		s.unknown = true
		return s
	}
	entries := 0
	for e := range strings.SplitSeq(*rest, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		entries++
		port, host, ok := strings.Cut(e, "@")
		n, err := strconv.ParseUint(port, 10, 16)
		name, hostOK := serverName(host)
		if !ok || err != nil || !hostOK {
			s.unknown = true
			continue
		}
		s.ports = append(s.ports, strconv.FormatUint(n, 10))
		s.names = append(s.names, name)
	}
	if entries == 0 {
		s.unknown = true
	}
	return s
}

// sawUP notes the host of an UP line read before the section's first feature.
func (s *lmstatSection) sawUP(line string) {
	if s.decided {
		return
	}
	if m := matchIf(strings.Contains(line, ": license server UP"), upLine, line); m != nil {
		if name, ok := serverName(m[1]); ok {
			s.aliases = append(s.aliases, name)
		}
	}
}

// keys returns the section's server keys, port@name.
func (s *lmstatSection) keys() []string {
	var keys []string
	for i := range s.ports {
		keys = append(keys, s.ports[i]+"@"+s.names[i])
	}
	for _, a := range s.aliases {
		if slices.Contains(s.names, a) {
			continue
		}
		for _, p := range s.ports {
			keys = append(keys, p+"@"+a)
		}
	}
	return keys
}

// decide tells, at the section's first feature, whether a section before
// it (whose keys are in seen) was the same server, and adds its keys to seen.
func (s *lmstatSection) decide(seen map[string]bool) {
	if s.decided {
		return
	}
	s.decided = true
	keys := s.keys()
	for _, k := range keys {
		if seen[k] {
			s.skip = true
		}
	}
	for _, k := range keys {
		seen[k] = true
	}
	s.anonymous = !s.skip && s.unknown
}

// serverName returns host lower-cased and cut to its first DNS label, an
// IP address whole, and false for what is neither.
func serverName(host string) (string, bool) {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if ip := net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")); ip != nil {
		return ip.String(), true
	}
	if h == "" || len(h) > 253 {
		return "", false
	}
	for _, c := range h {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '_' && c != '.' {
			return "", false
		}
	}
	name, _, _ := strings.Cut(h, ".")
	if name == "" {
		return "", false
	}
	return name, true
}
