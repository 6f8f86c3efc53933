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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

// JSONConfig is c speaking JSON. The API server has no protobuf for custom
// resources, and a generated clientset sends what the config asks for:
// with protobuf (as in an admin's or kube-scheduler's default kubeconfig),
// every request fails with "does not implement the protobuf marshalling
// interface".
func JSONConfig(c *rest.Config) *rest.Config {
	c = rest.CopyConfig(c)
	c.ContentType = runtime.ContentTypeJSON
	c.AcceptContentTypes = runtime.ContentTypeJSON
	return c
}
