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

package controller

import (
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/window"
)

// sources is the windows' input: MaintenanceWindow's sources as args set
// them, never the node conditions (they are this controller's output, and
// reading them would echo it). annotation, the annotation alone, tells
// which source announced a window.
type sources struct {
	all, annotation *window.Sources
	// provider names the providers' windows.
	provider string
}

func newSources(args *config.MaintenanceWindowArgs) *sources {
	all := *args
	// The conditions are our output; NodeClaims come through WithNodeClaims,
	// whose drift plans maintenance rather than opening a window.
	all.NodeConditions, all.Karpenter = false, false
	ann := all
	ann.ProviderSignals = false
	s := &sources{all: window.NewSources(&all), annotation: window.NewSources(&ann)}
	var names []string
	for _, src := range s.all.List()[1:] {
		names = append(names, src.Name)
	}
	s.provider = strings.Join(names, ", ")
	return s
}

// names lists the sources read, for the start-up log.
func (s *sources) names() []string {
	var out []string
	for _, src := range s.all.List() {
		out = append(out, src.Name+" "+src.Key)
	}
	return out
}

// spans returns the windows of known times node announces, with their
// source. A malformed value has none and is logged once, as the plugin
// logs it.
func (s *sources) spans(logger klog.Logger, node *v1.Node) []span {
	ws := s.all.Windows(logger, node)
	if len(ws) == 0 {
		return nil
	}
	var ann []window.Window
	if s.provider != "" {
		ann, _, _ = s.annotation.Parse(node)
	}
	out := make([]span, 0, len(ws)+1)
	for _, w := range ws {
		// Only the annotation's and the providers' times: anything else
		// would come from a source switched off above.
		if w.Signal != window.SignalTimed {
			continue
		}
		src := window.SourceAnnotation
		if s.provider != "" && !slices.Contains(ann, w) {
			src = s.provider
		}
		out = append(out, span{Start: w.Start, End: w.End, Source: src})
	}
	return out
}

// karpenter returns what node's NodeClaim adds: its expiry as a window
// without end, and its drift or disruption. The NodeClaim is found by the
// node's name or, before Karpenter records that name, its providerID.
func karpenter(claims window.NodeClaims, node *v1.Node) (*span, karpenterState) {
	if claims == nil {
		return nil, karpenterState{}
	}
	nc, ok := claims.ForNode(node)
	if !ok {
		return nil, karpenterState{}
	}
	k := karpenterState{claim: nc.Name, drifted: nc.Drifted, disrupting: nc.Disrupting}
	if nc.ExpiresAt.IsZero() {
		return nil, k
	}
	return &span{Start: nc.ExpiresAt, Source: "expiry of Karpenter NodeClaim " + nc.Name}, k
}
