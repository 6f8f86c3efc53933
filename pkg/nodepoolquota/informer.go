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

package nodepoolquota

import (
	"context"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/adminsched/scheduler-plugins/apis/scheduling/v1alpha1"
	"github.com/adminsched/scheduler-plugins/pkg/generated/clientset/versioned"
	"github.com/adminsched/scheduler-plugins/pkg/generated/informers/externalversions"
	listers "github.com/adminsched/scheduler-plugins/pkg/generated/listers/scheduling/v1alpha1"
)

// crdManifest is the CRD to install when the API server does not serve
// NodePoolQuotas.
const crdManifest = "manifests/crds/scheduling.adminsched.io_nodepoolquotas.yaml"

// syncTimeout bounds New's wait for the first list of NodePoolQuotas: a
// scheduler that cannot read them must not start and admit every pod.
var syncTimeout = time.Minute

// servedTimeout bounds New's wait for discovery to list NodePoolQuotas. A
// CRD applied just before the scheduler starts is Established before the
// API server's discovery lists it; a missing CRD is reported after this.
var servedTimeout = 10 * time.Second

// New builds the plugin. It takes no args. It watches NodePoolQuotas with a
// client of the scheduler's kubeconfig and waits for their first list, and
// reads namespace labels (for namespaceSelectors) and pending pods (to
// retry them when a quota eases) from the scheduler's informers.
func New(ctx context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	if err := noArgs(args); err != nil {
		return nil, err
	}
	if h == nil || h.KubeConfig() == nil {
		return nil, fmt.Errorf("%s needs the scheduler's kubeconfig to watch NodePoolQuotas", Name)
	}
	// The scheduler's kubeconfig asks for protobuf, which the API server
	// does not serve for custom resources: every request would fail.
	cfg := rest.CopyConfig(h.KubeConfig())
	cfg.ContentType = runtime.ContentTypeJSON
	cfg.AcceptContentTypes = runtime.ContentTypeJSON
	client, err := versioned.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: a NodePoolQuota client: %w", Name, err)
	}
	return newWithClient(ctx, h, client)
}

// newWithClient is New with the client given.
func newWithClient(ctx context.Context, h fwk.Handle, client versioned.Interface) (*NodePoolQuota, error) {
	logger := klog.FromContext(ctx)
	if h == nil || h.SharedInformerFactory() == nil {
		return nil, fmt.Errorf("%s needs the scheduler's informers to read namespaces and pods", Name)
	}
	if err := awaitServed(ctx, client.Discovery()); err != nil {
		return nil, err
	}
	core := h.SharedInformerFactory().Core().V1()
	pl := newPlugin(h, core.Namespaces().Lister())
	pl.pods = core.Pods().Lister()
	registerMetrics()

	factory := externalversions.NewSharedInformerFactory(client, 0)
	informer := factory.Scheduling().V1alpha1().NodePoolQuotas()
	lister := informer.Lister()
	refresh := func() { pl.refresh(logger, lister) }
	if _, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(interface{}) { refresh() },
		UpdateFunc: func(oldObj, newObj interface{}) {
			refresh()
			pl.retryEased(logger, oldObj, newObj)
		},
		DeleteFunc: func(obj interface{}) {
			refresh()
			pl.retryEased(logger, obj, nil)
		},
	}); err != nil {
		return nil, fmt.Errorf("%s: watching NodePoolQuotas: %w", Name, err)
	}
	factory.Start(ctx.Done())
	syncCtx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	for _, synced := range factory.WaitForCacheSync(syncCtx.Done()) {
		if !synced {
			return nil, fmt.Errorf("%s: NodePoolQuotas not listed within %s: can the scheduler list and watch nodepoolquotas.%s?",
				Name, syncTimeout, v1alpha1.GroupName)
		}
	}
	refresh()
	logger.V(2).Info("Plugin initialized", "plugin", Name, "quotas", len(pl.quotas.Load().list))
	return pl, nil
}

// awaitServed polls discovery until it lists NodePoolQuotas, for at most
// servedTimeout.
func awaitServed(ctx context.Context, disc discovery.DiscoveryInterface) error {
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, servedTimeout, true, func(context.Context) (bool, error) {
		ok, err := served(disc)
		lastErr = err
		return ok, nil
	})
	if err == nil {
		return nil
	}
	if lastErr != nil {
		return fmt.Errorf("%s: asking the API server whether it serves nodepoolquotas.%s: %w", Name, v1alpha1.SchemeGroupVersion, lastErr)
	}
	return fmt.Errorf("%s: the API server does not serve nodepoolquotas.%s/%s (waited %s): install the CRD %s",
		Name, v1alpha1.GroupName, v1alpha1.SchemeGroupVersion.Version, servedTimeout, crdManifest)
}

// served reports whether the API server serves NodePoolQuotas.
func served(disc discovery.DiscoveryInterface) (bool, error) {
	list, err := disc.ServerResourcesForGroupVersion(v1alpha1.SchemeGroupVersion.String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, r := range list.APIResources {
		if r.Name == "nodepoolquotas" {
			return true, nil
		}
	}
	return false, nil
}

// refresh compiles the informer's quotas anew (setQuotas keeps the
// unchanged ones).
func (pl *NodePoolQuota) refresh(logger klog.Logger, lister listers.NodePoolQuotaLister) {
	list, err := lister.List(labels.Everything())
	if err != nil {
		logger.Error(err, "Listing NodePoolQuotas", "plugin", Name)
		return
	}
	pl.setQuotas(logger, list)
}

// retryEased activates the pending pods whose team a quota change eases.
//
// The framework's queueing hint for the same change runs on its own
// dynamic informer, which can deliver before this informer's cache (which
// PreFilter reads) holds the change: the retried pod would be rejected
// again on the old limits, with no event left to retry it. This handler
// runs once the cache holds the change, so the retry it triggers sees it.
// Quota changes are rare; the pass over pending pods is cheap next to them.
func (pl *NodePoolQuota) retryEased(logger klog.Logger, oldObj, newObj interface{}) {
	if pl.pods == nil || pl.handle == nil {
		return
	}
	oldQ, err := asQuota(oldObj)
	if err != nil || oldQ == nil {
		return
	}
	newQ, err := asQuota(newObj)
	if err != nil {
		return
	}
	pods, err := pl.pods.List(labels.Everything())
	if err != nil {
		logger.Error(err, "Listing pods to retry after a NodePoolQuota change", "plugin", Name)
		return
	}
	ease := easer(oldQ, newQ)
	retry := map[string]*v1.Pod{}
	for _, pod := range pods {
		if pod.Spec.NodeName == "" && ease(pod.Namespace, pl.namespaceLabels(pod.Namespace)) {
			retry[pod.Namespace+"/"+pod.Name] = pod
		}
	}
	if len(retry) > 0 {
		logger.V(4).Info("A NodePoolQuota eased: retrying the pending pods of its teams", "quota", klog.KObj(oldQ), "pods", len(retry))
		pl.handle.Activate(logger, retry)
	}
}

// noArgs refuses args given in a pluginConfig entry: the plugin has no args
// kind, so the scheduler hands them over undecoded, and ignoring them would
// hide a misconfiguration.
func noArgs(args runtime.Object) error {
	if args == nil {
		return nil
	}
	if u, ok := args.(*runtime.Unknown); ok {
		switch strings.TrimSpace(string(u.Raw)) {
		case "", "{}", "null":
			return nil
		}
		return fmt.Errorf("pluginConfig[%s].args: %s takes no args (its quotas are NodePoolQuota objects), got %s; remove the args", Name, Name, u.Raw)
	}
	return fmt.Errorf("pluginConfig[%s].args: %s takes no args, got %T; remove the args", Name, Name, args)
}
