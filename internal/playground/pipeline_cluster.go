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

package playground

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
	"github.com/adminsched/scheduler-plugins/internal/playground/settle"
)

// scenarioNodeNames are the scenario's nodes, then those its steps added,
// by name.
func (p *pipeline) scenarioNodeNames() []string {
	names := slices.Clip(p.plan.NodeNames)
	for _, n := range p.added {
		names = append(names, n.Name)
	}
	return names
}

// addNodes creates the nodes of specs, as the scenario's were, and waits
// until KWOK runs them.
func (p *pipeline) addNodes(ctx context.Context, specs []scenario.NodeSpec) error {
	created := p.now()
	nodes := scenario.NodeObjects(specs, created)
	if err := p.cluster.startNodes(ctx, nodes, created, p.progress); err != nil {
		return err
	}
	p.added = append(p.added, nodes...)
	return nil
}

// deschedule runs the descheduler's cycles, each on a settled cluster:
// once it exits, every target is waited for until the pods it evicted are
// made again and placed. It sets p.evicted to the pods evicted.
func (p *pipeline) deschedule(ctx context.Context, cycles int) error {
	if p.descheduler == nil {
		return errors.New("no descheduler policy: give --descheduler")
	}
	p.evicted = 0
	for i := 1; i <= cycles; i++ {
		counter, err := watchEvictions(ctx, p.cluster.client)
		if err != nil {
			return err
		}
		err = p.descheduler.cycle(ctx, i)
		if err == nil {
			err = p.settler.Settle(ctx, p.targets, settle.Change{Written: p.targets})
		}
		// Settled, the replacements of the evicted pods are placed: the
		// watch has long seen the evictions, which come first.
		n := counter.stop()
		if err != nil {
			return fmt.Errorf("descheduler cycle %d: %w", i, err)
		}
		p.evicted += n
		fmt.Fprintf(p.progress, "descheduler cycle %d/%d: %d evicted\n", i, cycles, n)
	}
	return nil
}
