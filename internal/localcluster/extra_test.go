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

package localcluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStartProcess(t *testing.T) {
	dir := t.TempDir()
	script(t, dir, "autoscaler", `echo "args $1 env $AUTOSCALER_MODE"; exit 4`)
	cp := &ControlPlane{}
	defer cp.closeLogs()
	p, err := cp.StartProcess(dir, "autoscaler", filepath.Join(dir, "autoscaler"), []string{"AUTOSCALER_MODE=test"}, "--once")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.p.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the script did not exit")
	}
	if p.Log() != filepath.Join(dir, "autoscaler.log") {
		t.Errorf("log %s, want %s", p.Log(), filepath.Join(dir, "autoscaler.log"))
	}
	for name, err := range map[string]error{"Process.Err": p.Err(), "ControlPlane.Err": cp.Err()} {
		if err == nil {
			t.Errorf("%s is nil after the process exited", name)
			continue
		}
		for _, want := range []string{"autoscaler exited", "exit status 4", "args --once env test"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s %q does not contain %q", name, err, want)
			}
		}
	}
}

func TestStartProcessStoppedFirst(t *testing.T) {
	dir := t.TempDir()
	// Each script writes its name to order when SIGTERM reaches it.
	order := filepath.Join(dir, "order")
	for _, name := range []string{"kwok", "autoscaler"} {
		script(t, dir, name, `trap "echo `+name+` >> `+order+`; exit 0" TERM; while :; do sleep 0.05; done`)
	}
	cp := &ControlPlane{}
	kwok, err := cp.start(dir, dir, "kwok")
	if err != nil {
		t.Fatal(err)
	}
	cp.procs = append(cp.procs, kwok)
	p, err := cp.StartProcess(dir, "autoscaler", filepath.Join(dir, "autoscaler"), nil)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // let the shells install their traps
	if err := cp.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := p.Err(); err != nil {
		t.Errorf("Err after Stop: %v", err)
	}
	if err := p.Stop(time.Second); err != nil {
		t.Errorf("stopping a stopped process: %v", err)
	}
	data, err := os.ReadFile(order)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(data)); strings.Join(got, ",") != "autoscaler,kwok" {
		t.Errorf("stopped in the order %v, want autoscaler then kwok", got)
	}
}
