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

// Package licensedriver holds the parts of cmd/license-driver, a DRA driver
// that makes the seats of a license server a counted resource of the
// cluster. Kubernetes' own DRA does the counting and the allocation: the
// driver only publishes the seats as allNodes devices (package seats, through
// the standard ResourceSlice publisher: one device per seat, whose seats
// checked out outside the cluster carry device taints, or one shared device
// per feature whose capacity is the seats left), and prepares
// allocated claims on the node (package node) by injecting the license
// server's address. Seat counts come from a Source (package source).
package licensedriver

// DriverName is the DRA driver name: the ResourceSlices' spec.driver, the
// prefix of the default extended resource names and of device taint keys.
const DriverName = "licenses.adminsched.io"
