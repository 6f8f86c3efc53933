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

package playground

import (
	"context"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/internal/playground/report"
	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/policy"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

// shareCounter counts, for a config that holds OnDemandShare policies, each
// workload's pods on on-demand nodes against its policy's minimum: the
// truth of the nodes' labels, whoever decided (the controller or the guard
// plugin alone).
type shareCounter struct {
	client   kubernetes.Interface
	policies []*policy.Policy
}

// count returns the share of every workload a policy counts among owned.
func (s *shareCounter) count(ctx context.Context, after string, owned []workload.OwnedPod) ([]report.ShareResult, error) {
	nodes, err := s.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the nodes for the on-demand share: %w", err)
	}
	byName := make(map[string]*corev1.Node, len(nodes.Items))
	for i := range nodes.Items {
		byName[nodes.Items[i].Name] = &nodes.Items[i]
	}
	nsLabels := map[string]labels.Set{}
	var out []report.ShareResult
	index := map[string]int{}
	for _, op := range owned {
		pod := op.Pod
		if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		if _, ok := nsLabels[pod.Namespace]; !ok {
			ns, err := s.client.CoreV1().Namespaces().Get(ctx, pod.Namespace, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("reading namespace %s for the on-demand share: %w", pod.Namespace, err)
			}
			nsLabels[pod.Namespace] = ns.Labels
		}
		p := s.policyOf(pod, op.Object, nsLabels[pod.Namespace])
		if p == nil {
			continue
		}
		kind, name, _ := strings.Cut(op.Object, "/")
		key := kind + " " + pod.Namespace + "/" + name
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			out = append(out, report.ShareResult{After: after, Workload: key, Policy: p.Name})
		}
		out[i].Pods++
		if node := byName[pod.Spec.NodeName]; node != nil {
			if class, ok := p.NodeClass(node); ok && class == share.OnDemand {
				out[i].OnDemand++
			}
		}
	}
	for i := range out {
		p := s.byName(out[i].Policy)
		out[i].Required = int(p.Required(int32(out[i].Pods)))
	}
	return out, nil
}

// policyOf is the policy that counts pod, owned by object (Kind/name): the
// one its label names, as admission set it, else the first by name that
// selects it, as the guard plugin finds it.
func (s *shareCounter) policyOf(pod *corev1.Pod, object string, nsLabels labels.Set) *policy.Policy {
	if name, ok := pod.Labels[share.PolicyLabel]; ok {
		return s.byName(name)
	}
	kind, _, _ := strings.Cut(object, "/")
	for _, p := range s.policies {
		if p.Kinds.Has(config.WorkloadKind(kind)) && p.SelectsNamespace(pod.Namespace, nsLabels) && p.SelectsPodLabels(pod.Labels) {
			return p
		}
	}
	return nil
}

func (s *shareCounter) byName(name string) *policy.Policy {
	for _, p := range s.policies {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// writeShare writes the shares as progress lines.
func writeShare(w io.Writer, shares []report.ShareResult) {
	for _, s := range shares {
		fmt.Fprintf(w, "on-demand share: %s\n", s)
	}
}
