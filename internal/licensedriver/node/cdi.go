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

package node

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	cdispec "tags.cncf.io/container-device-interface/specs-go"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver"
)

const (
	// CDIKind is the CDI vendor/class of the devices this driver writes.
	CDIKind = licensedriver.DriverName + "/seat"

	// CDIVersion is the lowest CDI spec version whose device names may
	// start with a digit, as claim UIDs do (0.5.0); nothing newer is needed
	// for environment variables, and an older version is readable by more
	// container runtimes.
	CDIVersion = "0.5.0"

	// cdiFilePrefix starts the name of every spec file this driver writes,
	// so that a shared CDI directory shows whose files they are.
	cdiFilePrefix = licensedriver.DriverName + "_seat_"
)

// claimUID is what a claim UID may hold to become part of a file name and a
// CDI device name: the API server's UIDs are UUIDs. Anything else (the UID
// of an unprepare call comes from the kubelet's request) is refused, so that
// a name can never leave the CDI directory.
var claimUID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,62}$`)

func validateClaimUID(uid types.UID) error {
	if !claimUID.MatchString(string(uid)) {
		return fmt.Errorf("claim UID %q: must be 1-63 letters, digits and '-', starting with a letter or digit", uid)
	}
	return nil
}

// CDIDeviceID is the fully qualified CDI device of a claim, as the kubelet
// passes it to the container runtime.
func CDIDeviceID(uid types.UID) string {
	return CDIKind + "=" + string(uid)
}

// SpecFileName is the name of a claim's CDI spec file in the CDI directory.
func SpecFileName(uid types.UID) string {
	return cdiFilePrefix + string(uid) + ".json"
}

// buildSpec is the CDI spec of one claim: a single device, named after the
// claim, that sets env in the container. Variables are sorted so that the
// same claim always gives the same bytes.
func buildSpec(uid types.UID, env map[string]string) *cdispec.Spec {
	vars := make([]string, 0, len(env))
	for k, v := range env {
		vars = append(vars, k+"="+v)
	}
	slices.Sort(vars)
	return &cdispec.Spec{
		Version: CDIVersion,
		Kind:    CDIKind,
		Devices: []cdispec.Device{{
			Name:           string(uid),
			ContainerEdits: cdispec.ContainerEdits{Env: vars},
		}},
	}
}

// encodeSpec checks that the spec's features fit its version, then encodes it.
func encodeSpec(spec *cdispec.Spec) ([]byte, error) {
	if err := cdispec.ValidateVersion(spec); err != nil {
		return nil, fmt.Errorf("CDI spec of device %s: %w", spec.Devices[0].Name, err)
	}
	data, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode CDI spec: %w", err)
	}
	return append(data, '\n'), nil
}

// specDir is the CDI directory: the container runtime reads every *.json
// and *.yaml file in it, and watches it for changes.
type specDir string

func (d specDir) path(uid types.UID) string {
	return filepath.Join(string(d), SpecFileName(uid))
}

// write puts data into the claim's spec file. A file that already holds
// data is left alone, so a repeated prepare does not make the runtime
// reload the directory. Otherwise the data goes to a temporary file whose
// name the runtime ignores (no .json suffix), then is renamed over the
// spec file: the runtime never reads half a spec.
func (d specDir) write(uid types.UID, data []byte) error {
	target := d.path(uid)
	if old, err := os.ReadFile(target); err == nil && bytes.Equal(old, data) {
		return nil
	}
	tmp, err := os.CreateTemp(string(d), "."+SpecFileName(uid)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write CDI spec: %w", err)
	}
	done := false
	defer func() {
		if !done {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write CDI spec %s: %w", tmp.Name(), err)
	}
	// The runtime runs as root and only reads the file; 0644 is what CDI
	// specs usually have (CreateTemp makes 0600).
	if err := tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("write CDI spec %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("write CDI spec %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write CDI spec %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return fmt.Errorf("write CDI spec %s: %w", target, err)
	}
	done = true
	return syncDir(string(d))
}

// remove deletes the claim's spec file; a file that is not there is fine.
func (d specDir) remove(uid types.UID) error {
	if err := os.Remove(d.path(uid)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove CDI spec: %w", err)
	}
	return nil
}

// syncDir makes a rename durable, so that after a node crash the directory
// does not hold a spec for a claim the kubelet saw as not prepared.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync CDI directory: %w", err)
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync CDI directory %s: %w", dir, err)
	}
	return nil
}
