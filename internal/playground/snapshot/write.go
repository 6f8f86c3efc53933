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

package snapshot

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
)

// Write writes snapshot s as scenario.Write does, then its objects (the
// pending pods), one per line in flow style, each after a comment that
// says which scheduler it named and what that scheduler said last.
func Write(w io.Writer, s *scenario.Scenario, header []string) error {
	if err := scenario.Write(w, s, header); err != nil {
		return err
	}
	if len(s.Objects) == 0 {
		return nil
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	_, _ = bw.WriteString("objects:\n")
	for _, o := range s.Objects {
		data, err := json.Marshal(o)
		if err != nil {
			return err
		}
		_, _ = bw.WriteString(pendingComment(o))
		_, _ = bw.WriteString("- ")
		_, _ = bw.Write(data)
		_ = bw.WriteByte('\n')
	}
	return bw.Flush()
}

// pendingComment is the comment line before a pending pod's object.
func pendingComment(o scenario.Object) string {
	meta, _ := o["metadata"].(map[string]interface{})
	annotations, _ := meta["annotations"].(map[string]interface{})
	scheduler, _ := annotations[scenario.SnapshotSchedulerAnnotation].(string)
	message, _ := annotations[LastFailedSchedulingAnnotation].(string)
	line := fmt.Sprintf("# %v/%v (scheduler %s): ", meta["namespace"], meta["name"], scheduler)
	if message == "" {
		return line + "no FailedScheduling event\n"
	}
	// One line, whatever the message held.
	return line + strings.Join(strings.Fields(message), " ") + "\n"
}
