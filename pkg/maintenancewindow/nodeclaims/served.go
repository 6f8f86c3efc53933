package nodeclaims

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// GVR is Karpenter's NodeClaim resource (cluster-scoped). It is read through
// the dynamic client so that this module does not depend on Karpenter.
var GVR = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}

// Served reports whether the API server serves karpenter.sh/v1 nodeclaims.
// Callers check it before NewIndex: an informer on a resource that is not
// served retries and logs forever. A group the server does not know is
// (false, nil), the usual case of a cluster without Karpenter; any other
// error is returned, as the answer is then unknown.
func Served(disc discovery.DiscoveryInterface) (bool, error) {
	list, err := disc.ServerResourcesForGroupVersion(GVR.GroupVersion().String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, r := range list.APIResources {
		if r.Name == GVR.Resource {
			return true, nil
		}
	}
	return false, nil
}
