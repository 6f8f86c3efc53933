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

package integration

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"

	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// kustomize renders a kustomization with kustomize's Go API, as
// kubectl apply -k does.
func kustomize(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var objs []*unstructured.Unstructured
	for _, res := range resMap.Resources() {
		m, err := res.Map()
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	return objs
}

// apply server-side applies objects with the admin's credentials, namespaces first.
func (tc *testContext) apply(objs []*unstructured.Unstructured) {
	tc.t.Helper()
	dyn := dynamic.NewForConfigOrDie(adminConfig)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(adminClient.Discovery()))
	ordered := append([]*unstructured.Unstructured{}, objs...)
	for i, o := range ordered {
		if o.GetKind() == "Namespace" {
			ordered[0], ordered[i] = ordered[i], ordered[0]
		}
	}
	for _, o := range ordered {
		gvk := o.GroupVersionKind()
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			tc.t.Fatalf("%s %s: %v", gvk.Kind, o.GetName(), err)
		}
		data, err := o.MarshalJSON()
		if err != nil {
			tc.t.Fatal(err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
		if o.GetNamespace() != "" {
			ri = dyn.Resource(mapping.Resource).Namespace(o.GetNamespace())
		}
		if _, err := ri.Patch(tc.ctx, o.GetName(), types.ApplyPatchType, data,
			metav1.PatchOptions{FieldManager: "integration-test", Force: ptr.To(true)}); err != nil {
			tc.t.Fatalf("applying %s %s/%s: %v", gvk.Kind, o.GetNamespace(), o.GetName(), err)
		}
	}
}

// serviceAccountKubeconfig writes a kubeconfig that authenticates with a
// fresh token of the ServiceAccount, as a pod running under it would.
func (tc *testContext) serviceAccountKubeconfig(ns, name string) string {
	tc.t.Helper()
	tr, err := adminClient.CoreV1().ServiceAccounts(ns).CreateToken(tc.ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		tc.t.Fatalf("creating a token for ServiceAccount %s/%s: %v", ns, name, err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["envtest"] = &clientcmdapi.Cluster{Server: adminConfig.Host, CertificateAuthorityData: adminConfig.CAData}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["default"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: name}
	cfg.CurrentContext = "default"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		tc.t.Fatal(err)
	}
	return tc.writeFile(name+".kubeconfig", string(data))
}

var forbidden = regexp.MustCompile(`(?i)forbidden|cannot (list|watch|get|create|update|patch)`)

// TestInstallManifests applies manifests/install to the API server, runs the
// binary with the ServiceAccount's own token and the ConfigMap's config, and
// schedules the tutorial's examples: the RBAC must grant everything the
// scheduler does (no "forbidden" in its log), leader election must work on
// its own lease, and the HTTPS probes must answer.
func TestInstallManifests(t *testing.T) {
	tc := newTestContext(t)
	objs := kustomize(t, "../../manifests/install")
	tc.apply(objs)

	var config, namespace string
	for _, o := range objs {
		if o.GetKind() == "ConfigMap" {
			var cm v1.ConfigMap
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &cm); err != nil {
				t.Fatal(err)
			}
			config, namespace = cm.Data["scheduler-config.yaml"], cm.Namespace
		}
	}
	if config == "" {
		t.Fatal("manifests/install has no ConfigMap with scheduler-config.yaml")
	}
	// In a pod the client comes from the in-cluster config; here from the
	// ServiceAccount's token. --kubeconfig is ignored next to --config.
	config += fmt.Sprintf("clientConnection:\n  kubeconfig: %q\n", tc.serviceAccountKubeconfig(namespace, "custom-scheduler"))
	if strings.Count(config, "clientConnection:") != 1 {
		t.Fatalf("the ConfigMap's config sets clientConnection itself; adapt the test:\n%s", config)
	}
	nodes := tc.createNodes(nodeSpec{name: "install-a"}, nodeSpec{name: "install-b"}, nodeSpec{name: "install-c"})
	serving, port := tc.servingArgs()
	proc := tc.runBinary("installed-scheduler", append(serving, "--config="+tc.writeFile("config.yaml", config), "--v=2")...)
	tc.waitForLeader([]*schedulerProcess{proc})

	// The examples, in the test's namespace; the Deployment's pods are
	// created as a ReplicaSet would (no controller runs here).
	var podNames []string
	for _, o := range kustomize(t, "../../manifests/examples") {
		switch o.GetKind() {
		case "Pod":
			var pod v1.Pod
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &pod); err != nil {
				t.Fatal(err)
			}
			pod.Namespace = tc.ns
			tc.createPod(&pod)
			podNames = append(podNames, pod.Name)
		case "Deployment":
			var d appsv1.Deployment
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &d); err != nil {
				t.Fatal(err)
			}
			if d.Spec.Template.Spec.SchedulerName != schedulerName {
				t.Errorf("example Deployment %s uses scheduler %q, want %q", d.Name, d.Spec.Template.Spec.SchedulerName, schedulerName)
			}
			podNames = append(podNames, tc.createReplicaSetPods(d.Name, int(ptr.Deref(d.Spec.Replicas, 1)), func(p *v1.Pod) {
				p.Labels = d.Spec.Template.Labels
				p.Spec = *d.Spec.Template.Spec.DeepCopy()
			})...)
		}
	}
	if len(podNames) != 7 {
		t.Fatalf("the examples make %d pods, want test-pod-1, test-pod-2 and 5 replicas", len(podNames))
	}
	tc.waitScheduled(podNames...)
	if counts := tc.podsPerNode(nodes, nil); spread(counts) > 1 {
		t.Errorf("example pods per node %v: spread %d, want at most 1", counts, spread(counts))
	}

	checkReadyz(t, tc.ctx, port)
	if lines := forbidden.FindAllString(proc.output(), -1); len(lines) > 0 {
		t.Errorf("the scheduler running as the ServiceAccount was refused %d times (first: %q): the RBAC misses something", len(lines), lines[0])
	}
	if _, err := adminClient.CoordinationV1().Leases(namespace).Get(tc.ctx, "custom-scheduler", metav1.GetOptions{}); err != nil {
		t.Errorf("the scheduler's lease %s/custom-scheduler: %v", namespace, err)
	}
}

// checkReadyz calls /readyz on the secure port without credentials, as the
// Deployment's probe does, and expects 200.
func checkReadyz(t *testing.T, ctx context.Context, port int) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the scheduler's self-signed serving cert
	}}
	var last string
	err := wait.PollUntilContextTimeout(ctx, pollInterval, waitTimeout, true, func(context.Context) (bool, error) {
		resp, err := client.Get(fmt.Sprintf("https://127.0.0.1:%d/readyz", port))
		if err != nil {
			last = err.Error()
			return false, nil
		}
		defer resp.Body.Close()
		last = resp.Status
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		t.Errorf("GET /readyz on the secure port: %s", last)
	}
}
