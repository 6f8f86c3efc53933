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

package schedulerplugins

import _ "embed"

// The playground's defaults, built in so that it runs from any folder: a
// path given on its command line is read from the file system, these bytes
// only stand in for the flags left out.
var (
	// DefaultSchedulerConfig is manifests/nodelesspods/scheduler-config.yaml,
	// the playground's --config when none is given.
	//go:embed manifests/nodelesspods/scheduler-config.yaml
	DefaultSchedulerConfig []byte
	// TutorialScenario is examples/scenarios/tutorial.yaml, the playground's
	// --scenario when none is given. It names no base: nothing beside it
	// is read.
	//go:embed examples/scenarios/tutorial.yaml
	TutorialScenario []byte
)
