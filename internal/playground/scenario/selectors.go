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
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/adminsched/scheduler-plugins/internal/didyoumean"
)

// validatePodSelector checks a pod selector; a namespace no object of the
// scenario is in would select no pod, which the run would report only
// after it.
func validatePodSelector(s *PodSelector, p *field.Path, refs scenarioRefs) field.ErrorList {
	var errs field.ErrorList
	nsKnown := true
	if s.Namespace != "" {
		msgs := validation.IsDNS1123Label(s.Namespace)
		for _, msg := range msgs {
			errs = append(errs, field.Invalid(p.Child("namespace"), s.Namespace, msg))
		}
		if len(msgs) == 0 && refs.namespaces != nil && !refs.namespaces.Has(s.Namespace) {
			nsKnown = false
			e := field.NotFound(p.Child("namespace"), s.Namespace)
			e.Detail = "no object of the scenario is in this namespace" + meantOrListed(s.Namespace, refs.namespaces)
			errs = append(errs, e)
		}
	}
	if o := s.Object; o != nil {
		op := p.Child("object")
		switch {
		case o.Kind == "":
			errs = append(errs, field.Required(op.Child("kind"), "the kind of an object of the scenario"))
		case o.Name == "":
			errs = append(errs, field.Required(op.Child("name"), ""))
		case nsKnown && refs.objects != nil && !refs.objects.Has(objectKey(o.Kind, orDefault(s.Namespace), o.Name)):
			e := field.NotFound(op.Child("name"), fmt.Sprintf("%s %s/%s is not an object of the scenario", o.Kind, orDefault(s.Namespace), o.Name))
			e.Detail = objectHint(refs.objects, o, orDefault(s.Namespace))
			errs = append(errs, e)
		}
	}
	return append(errs, validateSelector(s.MatchLabels, s.MatchExpressions, p)...)
}

// meantOrListed is "; did you mean ...?" with the name of names closest to
// name, or the names when none is close.
func meantOrListed(name string, names sets.Set[string]) string {
	if meant := didyoumean.Closest(name, sets.List(names)); meant != "" {
		return fmt.Sprintf("; did you mean %q?", meant)
	}
	if names.Len() == 0 {
		return " (the scenario has no namespaced object)"
	}
	return " (the scenario's: " + strings.Join(sets.List(names), ", ") + ")"
}

// objectHint is what to write instead of an object ref o in namespace
// that is not in the scenario: the same object in another namespace, else
// the name closest among the objects of its kind in namespace.
func objectHint(objects sets.Set[string], o *PodOwnerRef, namespace string) string {
	var names []string
	for _, key := range sets.List(objects) {
		kind, nsName, _ := strings.Cut(key, " ")
		ns, name, _ := strings.Cut(nsName, "/")
		switch {
		case kind != o.Kind:
		case name == o.Name:
			return fmt.Sprintf("%s %s/%s is: set pods.namespace: %s", kind, ns, name, ns)
		case ns == namespace:
			names = append(names, name)
		}
	}
	if meant := didyoumean.Closest(o.Name, names); meant != "" {
		return fmt.Sprintf("did you mean %q?", meant)
	}
	return ""
}

func validateNodeSelector(s *NodeSelector, p *field.Path, nodes sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	for j, n := range s.Names {
		if nodes != nil && !nodes.Has(n) {
			errs = append(errs, field.NotFound(p.Child("names").Index(j), n))
		}
	}
	return append(errs, validateSelector(s.MatchLabels, s.MatchExpressions, p)...)
}

// validateSelector checks a label selector as the API server checks one,
// and that it parses.
func validateSelector(matchLabels map[string]string, exprs []metav1.LabelSelectorRequirement, p *field.Path) field.ErrorList {
	sel := &metav1.LabelSelector{MatchLabels: matchLabels, MatchExpressions: exprs}
	errs := metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, p)
	if len(errs) > 0 {
		return errs
	}
	if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
		errs = append(errs, field.Invalid(p, sel.String(), err.Error()))
	}
	return errs
}
