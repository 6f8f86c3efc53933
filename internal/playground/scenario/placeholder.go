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

package scenario

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Placeholders of annotation values, the companion of the nodes section
// (nodes.go), which would pass 350 lines with them. A scenario is replayed at any time, so
// a node annotation that holds a time (such as the MaintenanceWindow
// plugin's scheduling.adminsched.io/maintenance-window) says it relative to
// when the nodes are created: ${now}, ${now+2h}, ${now-30m}, ${now+1h30m}.
// What follows the sign is a Go duration (time.ParseDuration, without a sign
// of its own). Each placeholder becomes that time in UTC, to the second, in
// RFC 3339 (2006-01-02T15:04:05Z). Every "${" of an annotation value starts
// a placeholder; "$$" is a "$" of the value, so "$${now}" is the text
// "${now}" (escapePlaceholders writes any value so). Any other "$" is kept.
const (
	placeholderEscape = "$$"
	placeholderOpen   = "${"
	placeholderClose  = "}"
	placeholderNow    = "now"
	// placeholderSyntax is what error messages say a placeholder should be.
	placeholderSyntax = "${now}, ${now+DURATION} or ${now-DURATION}, with a Go duration such as 2h, 30m or 1h30m"
)

// parsePlaceholder returns the offset from now of the inside of a
// placeholder ("now", "now+2h", "now-30m").
func parsePlaceholder(inner string) (time.Duration, error) {
	rest, ok := strings.CutPrefix(inner, placeholderNow)
	if !ok {
		return 0, fmt.Errorf("want %s", placeholderSyntax)
	}
	if rest == "" {
		return 0, nil
	}
	sign := rest[0]
	if sign != '+' && sign != '-' {
		return 0, fmt.Errorf("want %s", placeholderSyntax)
	}
	d := rest[1:]
	if d == "" || d[0] == '+' || d[0] == '-' {
		return 0, fmt.Errorf("want a duration without a sign after %q, such as 2h, 30m or 1h30m", inner[:len(placeholderNow)+1])
	}
	offset, err := time.ParseDuration(d)
	if err != nil {
		return 0, err
	}
	if sign == '-' {
		offset = -offset
	}
	return offset, nil
}

// expandPlaceholders replaces every placeholder of value by now plus its
// offset, formatted by formatTime, and every "$$" by "$". It fails on the
// first malformed placeholder, naming it.
func expandPlaceholders(value string, now time.Time) (string, error) {
	return expandAs(value, now, formatTime)
}

// expandAs is expandPlaceholders with the times written by format.
func expandAs(value string, now time.Time, format func(time.Time) string) (string, error) {
	if !strings.Contains(value, "$") {
		return value, nil
	}
	var b strings.Builder
	rest := value
	for {
		i := strings.IndexByte(rest, '$')
		if i < 0 {
			b.WriteString(rest)
			return b.String(), nil
		}
		b.WriteString(rest[:i])
		rest = rest[i:]
		if strings.HasPrefix(rest, placeholderEscape) {
			b.WriteByte('$')
			rest = rest[len(placeholderEscape):]
			continue
		}
		after, found := strings.CutPrefix(rest, placeholderOpen)
		if !found {
			b.WriteByte('$')
			rest = rest[1:]
			continue
		}
		inner, tail, closed := strings.Cut(after, placeholderClose)
		if !closed {
			return "", fmt.Errorf("placeholder %q has no closing %q: want %s", placeholderOpen+after, placeholderClose, placeholderSyntax)
		}
		offset, err := parsePlaceholder(inner)
		if err != nil {
			return "", fmt.Errorf("malformed placeholder %q: %w", placeholderOpen+inner+placeholderClose, err)
		}
		b.WriteString(format(now.Add(offset)))
		rest = tail
	}
}

// EscapePlaceholders returns the annotation value that expands to value:
// every "$" doubled, so that no "${" starts a placeholder.
func EscapePlaceholders(value string) string {
	return strings.ReplaceAll(value, "$", placeholderEscape)
}

// formatTime is how a placeholder writes a time: UTC, to the second, RFC 3339.
func formatTime(t time.Time) string {
	return t.UTC().Truncate(time.Second).Format(time.RFC3339)
}

// formatUnix is how a placeholder writes a time in a label value, which
// cannot hold the colons of RFC 3339: Unix epoch seconds, the format of
// GKE's cloud.google.com/scheduled-maintenance-time label.
func formatUnix(t time.Time) string {
	return strconv.FormatInt(t.Unix(), 10)
}

// expandAnnotations returns a copy of annotations with their placeholders
// expanded at now. A malformed placeholder, which validation reports, is
// left as written.
func expandAnnotations(annotations map[string]string, now time.Time) map[string]string {
	return expandMap(annotations, now, formatTime)
}

// expandLabels is expandAnnotations of label values, whose times are Unix
// epoch seconds.
func expandLabels(labels map[string]string, now time.Time) map[string]string {
	return expandMap(labels, now, formatUnix)
}

func expandMap(m map[string]string, now time.Time, format func(time.Time) string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if expanded, err := expandAs(v, now, format); err == nil {
			v = expanded
		}
		out[k] = v
	}
	return out
}

// validateNodeLabels checks the labels as the API server does, with their
// placeholders expanded, and that every placeholder is well formed.
func validateNodeLabels(labels map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if _, err := expandAs(labels[k], time.Now(), formatUnix); err != nil {
			errs = append(errs, field.Invalid(path.Key(k), labels[k], err.Error()))
		}
	}
	return append(metav1validation.ValidateLabels(expandLabels(labels, time.Now()), path), errs...)
}
