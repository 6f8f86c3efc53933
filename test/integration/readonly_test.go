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

package integration

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/test/integration/framework"
)

// readOnlyExecEnv makes the test binary, run with it set, a wrapper: in the
// mount namespace it was started in, it remounts every mount read-only and
// executes its arguments (the scheduler binary and its flags).
const readOnlyExecEnv = "ADMINSCHED_TEST_READ_ONLY_EXEC"

func init() {
	if os.Getenv(readOnlyExecEnv) != "1" {
		return
	}
	err := remountReadOnly()
	if err == nil {
		env := make([]string, 0, len(os.Environ()))
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, readOnlyExecEnv+"=") {
				env = append(env, kv)
			}
		}
		err = syscall.Exec(os.Args[1], os.Args[1:], env)
	}
	fmt.Fprintf(os.Stderr, "read-only wrapper: %v\n", err)
	os.Exit(125)
}

// mount is one line of /proc/self/mountinfo.
type mount struct {
	point   string
	options []string // per-mount options: rw or ro, nosuid, relatime...
}

func mounts() ([]mount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mount
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 {
			return nil, fmt.Errorf("mountinfo line %q", sc.Text())
		}
		out = append(out, mount{point: unescapeOctal(fields[4]), options: strings.Split(fields[5], ",")})
	}
	return out, sc.Err()
}

// unescapeOctal undoes mountinfo's escapes (\040 for a space).
func unescapeOctal(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mountFlags are the per-mount flags a bind remount must keep (in a user
// namespace, dropping a locked one is refused).
var mountFlags = map[string]uintptr{
	"nosuid":      syscall.MS_NOSUID,
	"nodev":       syscall.MS_NODEV,
	"noexec":      syscall.MS_NOEXEC,
	"noatime":     syscall.MS_NOATIME,
	"nodiratime":  syscall.MS_NODIRATIME,
	"relatime":    syscall.MS_RELATIME,
	"strictatime": syscall.MS_STRICTATIME,
}

// remountReadOnly makes every mount of this mount namespace read-only
// (root filesystem, /tmp, /dev/shm, /proc, everything: stricter than a pod
// with readOnlyRootFilesystem, whose /dev/shm stays writable), then checks
// that each is and that a file cannot be created where a process would
// write (/, the temp dir, the home and working directories).
func remountReadOnly() error {
	// Nothing done here may propagate to the test's own namespace.
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making / private: %w", err)
	}
	ms, err := mounts()
	if err != nil {
		return err
	}
	var errs []error
	for _, m := range ms {
		flags := uintptr(syscall.MS_REMOUNT | syscall.MS_BIND | syscall.MS_RDONLY)
		for _, o := range m.options {
			flags |= mountFlags[o]
		}
		if err := syscall.Mount("", m.point, "", flags, ""); err != nil {
			errs = append(errs, fmt.Errorf("remounting %s read-only: %w", m.point, err))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if ms, err = mounts(); err != nil {
		return err
	}
	// A mount point can appear more than once (mounts stacked on it): the
	// last one hides the others and is the one a path reaches.
	visible := map[string]mount{}
	for _, m := range ms {
		visible[m.point] = m
	}
	for _, m := range visible {
		if m.options[0] != "ro" {
			errs = append(errs, fmt.Errorf("%s is still mounted %s", m.point, m.options[0]))
		}
	}
	wd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	for _, dir := range []string{"/", os.TempDir(), home, wd} {
		if dir == "" {
			continue
		}
		f, err := os.CreateTemp(dir, ".read-only-probe-")
		if err == nil {
			f.Close()
			os.Remove(f.Name())
			errs = append(errs, fmt.Errorf("could create %s", f.Name()))
		} else if !errors.Is(err, syscall.EROFS) {
			errs = append(errs, fmt.Errorf("creating a file in %s: %w, want %v", dir, err, syscall.EROFS))
		}
	}
	return errors.Join(errs...)
}

// runReadOnly starts the scheduler binary as runBinary does, in a mount
// namespace of its own where every filesystem is read-only. It skips the
// test where no mount namespace can be created.
func (tc *testContext) runReadOnly(name string, args ...string) *framework.Process {
	tc.t.Helper()
	self, err := os.Executable()
	if err != nil {
		tc.t.Fatal(err)
	}
	cmd := exec.Command(self, append([]string{tc.schedulerBinary()}, args...)...)
	cmd.Env = append(os.Environ(), readOnlyExecEnv+"=1")
	cmd.Dir = tc.t.TempDir()
	if uid, gid := os.Geteuid(), os.Getegid(); uid == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	} else {
		// Unprivileged: a user namespace, in which this user is root and may
		// make mounts read-only (never writable).
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}},
		}
	}
	p, err := framework.StartProcess(tc.t, name, cmd)
	if err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC) {
			tc.t.Skipf("this machine does not let the test create a mount namespace (%v): the read-only root filesystem is not checked", err)
		}
		tc.t.Fatalf("starting %s: %v", name, err)
	}
	return p
}

// TestInstallReadOnlyRootFilesystem runs the binary with the Deployment's
// arguments where nothing can be written, as deployment.yaml's
// readOnlyRootFilesystem without a writable volume: it must become the
// leader, schedule the examples and serve /readyz, and must not have tried
// to write (a write fails with "read-only file system", which the scheduler
// would log or die of). kube-scheduler generates its serving certificate in
// memory when --cert-dir is empty (its default) and klog writes to stderr
// only, so the Deployment mounts no emptyDir.
func TestInstallReadOnlyRootFilesystem(t *testing.T) {
	tc := newTestContext(t)
	in := tc.install()

	// The claim is about this container: read-only root and only
	// read-only volumes. If either changes, so does what this test proves.
	sc := in.container.SecurityContext
	if sc == nil || !ptr.Deref(sc.ReadOnlyRootFilesystem, false) {
		t.Errorf("the kube-scheduler container does not set readOnlyRootFilesystem: true")
	}
	for _, m := range in.container.VolumeMounts {
		if !m.ReadOnly {
			t.Errorf("volume %s is mounted writable at %s: this test runs the scheduler with nothing writable", m.Name, m.MountPath)
		}
	}

	nodes := tc.createNodes(makeNode("read-only-a"), makeNode("read-only-b"), makeNode("read-only-c"))
	args, port := tc.schedulerArgs(in, in.config)
	proc := tc.runReadOnly("read-only-scheduler", args...)
	tc.waitForLeader([]*framework.Process{proc})
	tc.scheduleExamples(nodes)
	checkReadyz(t, tc.ctx, port)

	out := proc.Output()
	if !strings.Contains(out, "Generated self-signed cert in-memory") {
		t.Errorf("the scheduler did not log %q: where does its serving certificate come from?", "Generated self-signed cert in-memory")
	}
	for _, bad := range []string{"read-only file system", "permission denied"} {
		if strings.Contains(strings.ToLower(out), bad) {
			t.Errorf("the scheduler's log says %q: it tried to write", bad)
		}
	}
}
