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

package framework

import (
	"context"
	"testing"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/adminsched/scheduler-plugins/internal/controllerrun"
	"github.com/adminsched/scheduler-plugins/pkg/generated/clientset/versioned"
	npqinformers "github.com/adminsched/scheduler-plugins/pkg/generated/informers/externalversions"
	"github.com/adminsched/scheduler-plugins/pkg/nodepoolquota/controller"
)

// NodePoolQuotaClient is the NodePoolQuota clientset of cfg, speaking JSON
// (see JSONConfig).
func NodePoolQuotaClient(cfg *rest.Config) *versioned.Clientset {
	return versioned.NewForConfigOrDie(JSONConfig(cfg))
}

// RunNodePoolQuotaController runs the NodePoolQuota controller in-process
// with cfg's credentials until t ends; its error then fails t.
func RunNodePoolQuotaController(ctx context.Context, t testing.TB, cfg *rest.Config) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	client := kubernetes.NewForConfigOrDie(cfg)
	quotaClient := NodePoolQuotaClient(cfg)
	recorder, shutdown := controllerrun.NewEventRecorder(ctx, client, "nodepoolquota-controller")
	qf := npqinformers.NewSharedInformerFactory(quotaClient, 0)
	c, err := controller.New(client, informers.NewSharedInformerFactory(client, 0), controller.Quotas{
		Informer: qf.Scheduling().V1alpha1().NodePoolQuotas().Informer(),
		Start:    qf.Start,
		Client:   quotaClient.SchedulingV1alpha1().NodePoolQuotas(),
	}, recorder)
	if err != nil {
		cancel()
		shutdown()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the NodePoolQuota controller: %v", err)
		}
		shutdown()
	})
}
