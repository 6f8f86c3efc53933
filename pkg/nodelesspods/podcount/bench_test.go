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

package podcount

import (
	"fmt"
	"runtime"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

const (
	benchNodes       = 5000
	benchPodsPerNode = 30
)

func benchNodeNames() []string {
	names := make([]string, benchNodes)
	for i := range names {
		names[i] = fmt.Sprintf("node-%d", i)
	}
	return names
}

// filledCache returns a cache holding benchPodsPerNode bound pods on each of
// benchNodes nodes.
func filledCache(nodes []string) *Cache {
	c := New()
	for i := range benchNodes * benchPodsPerNode {
		c.Bind(types.UID(fmt.Sprintf("pod-%d", i)), nodes[i%benchNodes])
	}
	return c
}

// BenchmarkCount is what Score reads: one node's count, under a read lock.
func BenchmarkCount(b *testing.B) {
	nodes := benchNodeNames()
	c := filledCache(nodes)
	i := 0
	for b.Loop() {
		if c.Count(nodes[i]) != benchPodsPerNode {
			b.Fatal("wrong count")
		}
		if i++; i == benchNodes {
			i = 0
		}
	}
}

// BenchmarkObserveForget is an informer add of a bound pod followed by its
// deletion, on a cache that holds 150,000 pods.
func BenchmarkObserveForget(b *testing.B) {
	nodes := benchNodeNames()
	c := filledCache(nodes)
	pods := make([]*v1.Pod, 4096)
	for i := range pods {
		pods[i] = &v1.Pod{}
		pods[i].UID = types.UID(fmt.Sprintf("new-%d", i))
		pods[i].Spec.NodeName = nodes[i%benchNodes]
		pods[i].Status.Phase = v1.PodRunning
	}
	i := 0
	for b.Loop() {
		pod := pods[i%len(pods)]
		c.ObservePod(pod, true)
		c.Forget(pod.UID)
		i++
	}
}

// BenchmarkReserveUnreserve is the cache side of the plugin's Reserve and
// Unreserve.
func BenchmarkReserveUnreserve(b *testing.B) {
	nodes := benchNodeNames()
	c := filledCache(nodes)
	uids := make([]types.UID, 4096)
	for i := range uids {
		uids[i] = types.UID(fmt.Sprintf("new-%d", i))
	}
	i := 0
	for b.Loop() {
		uid, node := uids[i%len(uids)], nodes[i%benchNodes]
		c.Reserve(uid, node)
		c.Unreserve(uid, node)
		i++
	}
}

// BenchmarkMemory reports the heap the cache takes per recorded pod (B/pod),
// for 100,000 pods bound over 5,000 nodes. The UID and node name strings are
// allocated beforehand: in the scheduler they belong to the informer's pod
// objects, which the cache shares. ns/op is the time to fill the cache.
func BenchmarkMemory(b *testing.B) {
	const pods = 100_000
	nodes := benchNodeNames()
	uids := make([]types.UID, pods)
	for i := range uids {
		uids[i] = types.UID(fmt.Sprintf("pod-%d", i))
	}
	var perPod float64
	var ms runtime.MemStats
	for b.Loop() {
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		before := ms.HeapAlloc
		b.StartTimer()
		c := New()
		for i, uid := range uids {
			c.Bind(uid, nodes[i%benchNodes])
		}
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		if c.Len() != pods {
			b.Fatalf("cache holds %d pods, want %d", c.Len(), pods)
		}
		perPod = float64(int64(ms.HeapAlloc)-int64(before)) / pods
		runtime.KeepAlive(c)
		b.StartTimer()
	}
	b.ReportMetric(perPod, "B/pod")
}
