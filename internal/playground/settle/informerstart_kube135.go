//go:build kube1.35

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

package settle

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/client-go/informers"
)

// startInformers bridges SharedInformerFactory.StartWithContext and
// WaitForCacheSyncWithContext, which exist since 1.36: 1.35's informers
// stop with ctx but log through the global logger.
func startInformers(ctx context.Context, f informers.SharedInformerFactory) error {
	f.Start(ctx.Done())
	var unsynced []string
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			unsynced = append(unsynced, typ.String())
		}
	}
	if len(unsynced) == 0 {
		return nil
	}
	slices.Sort(unsynced)
	return fmt.Errorf("failed to sync all caches: %s: %w", strings.Join(unsynced, ", "), context.Cause(ctx))
}
