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
	"encoding/json"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// The conditions of scenario nodes, the companion of the nodes section
// (nodes.go), which would pass 350 lines with them. A scenario states the
// conditions that an admin or a tool sets on a node, such as Kubernetes'
// node lifecycle conditions (MaintenancePlanned, DrainInProgress...).

// NodeCondition is a condition given to every node of a spec, in its
// status. Its message may hold the placeholders of annotation values
// (${now+2h}), expanded when the nodes are created.
type NodeCondition struct {
	Type    string          `json:"type"`
	Status  ConditionStatus `json:"status"`
	Reason  string          `json:"reason,omitempty"`
	Message string          `json:"message,omitempty"`
}

// ConditionStatus is a condition's status as written in the file: "True",
// "False" or "Unknown", quoted or not (an unquoted True or False is a YAML
// boolean, read as the status of that name).
type ConditionStatus string

// UnmarshalJSON accepts a JSON string or boolean.
func (s *ConditionStatus) UnmarshalJSON(data []byte) error {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case nil:
		*s = ""
	case string:
		*s = ConditionStatus(v)
	case bool:
		*s = ConditionStatus(corev1.ConditionFalse)
		if v {
			*s = ConditionStatus(corev1.ConditionTrue)
		}
	default:
		return fmt.Errorf("condition status must be True, False or Unknown, got %s", data)
	}
	return nil
}

// Limits of a spec's conditions: with MaxNodes nodes they stay a few
// megabytes on the API server.
const (
	maxConditions         = 16
	maxConditionMessage   = 1024
	maxConditionReasonLen = 128
)

var conditionStatuses = []string{string(corev1.ConditionTrue), string(corev1.ConditionFalse), string(corev1.ConditionUnknown)}

// kubeletConditions are set by KWOK as a kubelet would
// (localcluster.StartedNode): a scenario cannot set them.
var kubeletConditions = []string{
	string(corev1.NodeReady), string(corev1.NodeMemoryPressure), string(corev1.NodeDiskPressure),
	string(corev1.NodePIDPressure), string(corev1.NodeNetworkUnavailable),
}

func validateConditions(conds []NodeCondition, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(conds) > maxConditions {
		return append(errs, field.TooMany(path, len(conds), maxConditions))
	}
	seen := map[string]bool{}
	for i, c := range conds {
		p := path.Index(i)
		switch {
		case c.Type == "":
			errs = append(errs, field.Required(p.Child("type"), ""))
		case slices.Contains(kubeletConditions, c.Type):
			errs = append(errs, field.Forbidden(p.Child("type"), fmt.Sprintf("%s is set by KWOK as a kubelet would", c.Type)))
		case seen[c.Type]:
			errs = append(errs, field.Duplicate(p.Child("type"), c.Type))
		default:
			for _, msg := range validation.IsQualifiedName(c.Type) {
				errs = append(errs, field.Invalid(p.Child("type"), c.Type, msg))
			}
		}
		seen[c.Type] = true
		if !slices.Contains(conditionStatuses, string(c.Status)) {
			errs = append(errs, field.NotSupported(p.Child("status"), string(c.Status), conditionStatuses))
		}
		if len(c.Reason) > maxConditionReasonLen {
			errs = append(errs, field.TooLong(p.Child("reason"), "", maxConditionReasonLen))
		}
		if len(c.Message) > maxConditionMessage {
			errs = append(errs, field.TooLong(p.Child("message"), "", maxConditionMessage))
		} else if _, err := expandPlaceholders(c.Message, time.Now()); err != nil {
			errs = append(errs, field.Invalid(p.Child("message"), c.Message, err.Error()))
		}
	}
	return errs
}

// nodeConditions returns spec's conditions as of now: transitioned then,
// their messages expanded. The kubelet's Ready comes first.
func nodeConditions(spec NodeSpec, now time.Time) []corev1.NodeCondition {
	t := metav1.NewTime(now)
	conds := []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}
	for _, c := range spec.Conditions {
		msg, err := expandPlaceholders(c.Message, now)
		if err != nil {
			msg = c.Message
		}
		conds = append(conds, corev1.NodeCondition{
			Type: corev1.NodeConditionType(c.Type), Status: corev1.ConditionStatus(c.Status),
			Reason: c.Reason, Message: msg, LastHeartbeatTime: t, LastTransitionTime: t,
		})
	}
	return conds
}

// ScenarioConditions returns node's conditions that are not the kubelet's:
// those its spec gave it, which a status KWOK's start writes must keep.
func ScenarioConditions(node *corev1.Node) []corev1.NodeCondition {
	var out []corev1.NodeCondition
	for _, c := range node.Status.Conditions {
		if !slices.Contains(kubeletConditions, string(c.Type)) {
			out = append(out, c)
		}
	}
	return out
}

// validateConditionBytes bounds the conditions of all the specs at path.
func validateConditionBytes(nodes []NodeSpec, path *field.Path) field.ErrorList {
	if bytes := conditionBytes(nodes); bytes > MaxAnnotationBytes {
		return field.ErrorList{field.Invalid(path, bytes, fmt.Sprintf(
			"bytes of node conditions in total (their fields times each count): must be at most %d", MaxAnnotationBytes))}
	}
	return nil
}

// conditionBytes is the size of the node conditions the specs make, as
// written, counting specs whose count is in range.
func conditionBytes(nodes []NodeSpec) int {
	return bytesTimesCount(nodes, func(n NodeSpec) (size int) {
		for _, c := range n.Conditions {
			size += len(c.Type) + len(c.Status) + len(c.Reason) + len(c.Message)
		}
		return size
	})
}

// bytesTimesCount sums size of each spec whose count is in range, times
// its count.
func bytesTimesCount(nodes []NodeSpec, size func(NodeSpec) int) int {
	total := 0
	for _, n := range nodes {
		if nodeCountInRange(n) {
			total += size(n) * ptr.Deref(n.Count, 1)
		}
	}
	return total
}
