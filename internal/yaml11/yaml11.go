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

// Package yaml11 finds the unquoted words that sigs.k8s.io/yaml reads as
// YAML 1.1 booleans (an unquoted `n` is false, `yes` is true) and YAML 1.2
// reads as strings, so that a config or scenario holding them is refused with
// the field's path and the quoted form, rather than silently holding "false"
// or "true" where a string was meant.
package yaml11

import (
	"fmt"
	"strconv"

	yamlv3 "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// sigs.k8s.io/yaml converts YAML to JSON with YAML 1.1's booleans, also where
// a string is wanted (a node name, a label value, an environment variable).
// kube-scheduler's decoder refuses such a value in a string field, but a map
// of strings would silently hold "false" or "true". YAML 1.2 reads these
// words as strings, so callers refuse them where they are unquoted, in any
// position, and say how to write what was meant.

// words are the plain scalars that YAML 1.1 (and sigs.k8s.io/yaml)
// read as booleans and YAML 1.2 reads as strings. true/false (and True,
// TRUE, False, FALSE) are booleans in both, so they are not listed.
var words = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "on": true, "On": true, "ON": true,
	"n": false, "N": false, "no": false, "No": false, "NO": false, "off": false, "Off": false, "OFF": false,
}

// maxErrors caps how many ambiguous words are reported: a snapshot can
// hold thousands of the same mistake.
const maxErrors = 20

// Check returns an error for every unquoted YAML 1.1 boolean
// word in data, with its field path. It returns nothing for data that is
// not valid YAML: decoding reports that.
func Check(data []byte) field.ErrorList {
	if !mayHold(data) {
		return nil
	}
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(data, &doc); err != nil {
		return nil
	}
	var errs field.ErrorList
	walk(&doc, nil, &errs)
	if len(errs) > maxErrors {
		n := len(errs) - maxErrors
		errs = append(errs[:maxErrors], field.Invalid(field.NewPath("..."), n, "more unquoted YAML 1.1 booleans"))
	}
	return errs
}

// walk appends to errs an error for each ambiguous word under n, at
// path. Aliases are not followed: their anchor is checked where it stands.
func walk(n *yamlv3.Node, path *field.Path, errs *field.ErrorList) {
	switch n.Kind {
	case yamlv3.DocumentNode:
		for _, c := range n.Content {
			walk(c, path, errs)
		}
	case yamlv3.SequenceNode:
		for i, c := range n.Content {
			walk(c, indexPath(path, i), errs)
		}
	case yamlv3.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if ambiguousBoolean(k) {
				*errs = append(*errs, wordError(path, "key", k.Value))
			}
			walk(v, childPath(path, k.Value), errs)
		}
	case yamlv3.ScalarNode:
		if ambiguousBoolean(n) {
			*errs = append(*errs, wordError(path, "value", n.Value))
		}
	}
}

// ambiguousBoolean reports whether n is a plain scalar that YAML 1.2 reads as
// a string and YAML 1.1 as a boolean. An explicit tag (!!str yes) is not
// ambiguous.
func ambiguousBoolean(n *yamlv3.Node) bool {
	if n.Kind != yamlv3.ScalarNode || n.Style != 0 || n.ShortTag() != "!!str" {
		return false
	}
	_, ok := words[n.Value]
	return ok
}

func wordError(path *field.Path, what, word string) *field.Error {
	if path == nil {
		path = field.NewPath("<root>")
	}
	return field.Invalid(path, word, fmt.Sprintf(
		"this unquoted %s is a YAML 1.1 boolean (%t) to the decoder; quote it (%s) if a string is meant, or write %t if a boolean is",
		what, words[word], strconv.Quote(word), words[word]))
}

func childPath(p *field.Path, name string) *field.Path {
	if p == nil {
		return field.NewPath(name)
	}
	return p.Child(name)
}

func indexPath(p *field.Path, i int) *field.Path {
	if p == nil {
		return field.NewPath("").Index(i)
	}
	return p.Index(i)
}

// mayHold reports whether data holds one of the words as a
// token of its own, not next to a quote. A plain scalar is bounded by bytes
// that are neither word bytes nor quotes, so without such a token no scalar
// is ambiguous and the second parse is skipped: a snapshot's bound pods are
// JSON lines, whose strings are all quoted, and parsing them again costs as
// much as decoding them.
func mayHold(data []byte) bool {
	for i := 0; i < len(data); {
		if !isWordByte(data[i]) {
			i++
			continue
		}
		j := i
		for j < len(data) && isWordByte(data[j]) {
			j++
		}
		if j-i <= 3 && (i == 0 || !isQuote(data[i-1])) && (j == len(data) || !isQuote(data[j])) {
			if _, ok := words[string(data[i:j])]; ok {
				return true
			}
		}
		i = j
	}
	return false
}

func isQuote(b byte) bool { return b == '"' || b == '\'' }

func isWordByte(b byte) bool {
	return b == '_' || b == '-' || b == '.' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}
