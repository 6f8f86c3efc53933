//go:build !kube1.35

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

import "k8s.io/dynamic-resource-allocation/resourceslice"

// This file bridges resourceslice.Pool's AllNodes field, which exists since
// 1.36, for the tests.

// publishedAllNodes is the allNodes field the publisher writes in p's slices.
func publishedAllNodes(p resourceslice.Pool) bool { return p.AllNodes }
