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

package harness

import (
	"context"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"sigs.k8s.io/yaml"

	schedulerplugins "github.com/adminsched/scheduler-plugins"
	"github.com/adminsched/scheduler-plugins/pkg/nodepoolquota"
	"github.com/adminsched/scheduler-plugins/pkg/plugins"
	"github.com/adminsched/scheduler-plugins/test/integration/framework"
)

// Registry is our plugins' registry for the harness. The harness starts its
// API server and the scheduler in one step, with no hook between them, and
// NodePoolQuota's New refuses to start when nodepoolquotas are not served:
// its factory here installs the CRD (as an operator does before enabling
// the plugin) and then builds the plugin. With no NodePoolQuota object the
// plugin skips every pod: what the suites measure is its cost when idle.
func Registry() frameworkruntime.Registry {
	registry := plugins.Registry()
	registry[nodepoolquota.Name] = func(ctx context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		if err := installNodePoolQuotaCRD(ctx, h.KubeConfig()); err != nil {
			return nil, err
		}
		return nodepoolquota.New(ctx, args, h)
	}
	return registry
}

// installNodePoolQuotaCRD installs the embedded CRD; it may be there
// already: the harness's test cases share one etcd.
func installNodePoolQuotaCRD(ctx context.Context, cfg *rest.Config) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(schedulerplugins.NodePoolQuotaCRD, crd); err != nil {
		return fmt.Errorf("the NodePoolQuota CRD: %w", err)
	}
	return framework.InstallCRD(ctx, cfg, crd, framework.CRDOptions{MayExist: true, Timeout: time.Minute})
}
