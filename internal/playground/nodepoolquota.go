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

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	schedulerplugins "github.com/adminsched/scheduler-plugins"
	"github.com/adminsched/scheduler-plugins/apis/scheduling/v1alpha1"
	"github.com/adminsched/scheduler-plugins/internal/playground/apply"
	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
	"github.com/adminsched/scheduler-plugins/internal/playground/schedconfig"
	"github.com/adminsched/scheduler-plugins/pkg/admissionpolicy"
	"github.com/adminsched/scheduler-plugins/pkg/nodepoolquota"
)

// needsNodePoolQuotaCRD reports whether the run needs the NodePoolQuota
// CRD: a profile of sc runs the plugin, or plan holds quotas, which a run
// without the plugin (the control of a comparison) applies all the same.
func needsNodePoolQuotaCRD(sc *schedconfig.Config, plan *scenario.Plan) bool {
	for _, obj := range plan.Objects {
		if obj.GroupVersionKind().GroupKind() == nodePoolQuotaKind {
			return true
		}
	}
	return nodePoolQuotaEnabled(sc)
}

var nodePoolQuotaKind = v1alpha1.SchemeGroupVersion.WithKind("NodePoolQuota").GroupKind()

// nodePoolQuotaEnabled reports whether a profile of sc runs NodePoolQuota
// (it has only preFilter and filter).
func nodePoolQuotaEnabled(sc *schedconfig.Config) bool {
	if sc.Loaded == nil {
		return false
	}
	for _, prof := range sc.Loaded.Profiles {
		if prof.Plugins == nil {
			continue
		}
		if admissionpolicy.EnabledAt(prof.Plugins, prof.Plugins.PreFilter, nodepoolquota.Name) ||
			admissionpolicy.EnabledAt(prof.Plugins, prof.Plugins.Filter, nodepoolquota.Name) {
			return true
		}
	}
	return false
}

// installNodePoolQuotaCRD applies the built-in NodePoolQuota CRD and waits
// until it is served, before the scheduler starts: the plugin's New fails
// without it, and the scenario's objects, which may hold the quotas (and
// the CRD again, which applies over it), come only after.
func installNodePoolQuotaCRD(ctx context.Context, cfg *rest.Config, progress io.Writer) error {
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(schedulerplugins.NodePoolQuotaCRD, &crd.Object); err != nil {
		return fmt.Errorf("the built-in NodePoolQuota CRD: %w", err)
	}
	fmt.Fprintf(progress, "installing CustomResourceDefinition %s\n", crd.GetName())
	applier, err := apply.New(cfg, progress)
	if err != nil {
		return err
	}
	_, err = applier.Apply(ctx, crd)
	return err
}
