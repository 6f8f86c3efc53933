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

package descheduler

// The descheduler's policies, as Go maps marshalled to its YAML
// (apiVersion descheduler/v1alpha2): the root module must not import the
// descheduler's types.

// plugin is one strategy of a policy: its extension point (balance or
// deschedule), name and args.
type plugin struct {
	point, name string
	args        map[string]any
}

// policy returns a DeschedulerPolicy of one profile running p, with
// DefaultEvictor's args defaultEvictor; when policyEvictor is not nil,
// PolicyEvictor is enabled at filter and preevictionfilter with those args.
func policy(p plugin, defaultEvictor, policyEvictor map[string]any) map[string]any {
	plugins := map[string]any{p.point: enabled(p.name)}
	config := []any{
		map[string]any{"name": "DefaultEvictor", "args": defaultEvictor},
		map[string]any{"name": p.name, "args": p.args},
	}
	if policyEvictor != nil {
		plugins["filter"] = enabled("PolicyEvictor")
		// All lower case: the v1alpha2 field's JSON name; decoding
		// silently drops "preEvictionFilter".
		plugins["preevictionfilter"] = enabled("PolicyEvictor")
		config = append(config, map[string]any{"name": "PolicyEvictor", "args": policyEvictor})
	}
	return map[string]any{
		"apiVersion": "descheduler/v1alpha2",
		"kind":       "DeschedulerPolicy",
		"profiles": []any{map[string]any{
			"name":         "test",
			"plugins":      plugins,
			"pluginConfig": config,
		}},
	}
}

func enabled(names ...string) map[string]any {
	return map[string]any{"enabled": names}
}

// lowNodeUtilization balances by pod count: a node is under-utilized at
// deviation percent (of its allocatable pods) or more below the mean, and
// over-utilized above deviation percent over it (KEP-47 §5).
func lowNodeUtilization(deviation int) plugin {
	return plugin{point: "balance", name: "LowNodeUtilization", args: map[string]any{
		"useDeviationThresholds": true,
		"thresholds":             map[string]any{"pods": deviation},
		"targetThresholds":       map[string]any{"pods": deviation},
		"evictableNamespaces":    map[string]any{"exclude": []string{"kube-system"}},
	}}
}
