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
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

const testUID = types.UID("5f3c2a10-8d4e-4b7a-9c1f-2e6d8b0a7c35")

func decodeJSON(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("decode %q: %v", data, err)
	}
	return v
}

// TestSpecContent compares the encoded spec with hand-written CDI JSON, so
// a change of field names or layout shows as a diff against the format the
// runtimes read, not against the code's own structs. (The empty spec-level
// containerEdits is what specs-go writes; CDI reads it as no edits.)
func TestSpecContent(t *testing.T) {
	for _, tc := range []struct {
		name string
		uid  types.UID
		env  map[string]string
		want string // file in testdata, or inline JSON
	}{
		{
			name: "two variables, sorted",
			uid:  testUID,
			env: map[string]string{
				"LM_LICENSE_FILE":       "27000@licsrv.example.com",
				"ANSYSLMD_LICENSE_FILE": "1055@ansys.example.com",
			},
			want: "testdata/two-features.json",
		},
		{
			name: "a value with '=' and spaces is kept whole",
			uid:  "a1",
			env:  map[string]string{"LM_LICENSE_FILE": "27000@a:27000@b", "OPTS": "x=y z"},
			want: `{"cdiVersion": "0.5.0", "kind": "licenses.adminsched.io/seat", "containerEdits": {},
				"devices": [{"name": "a1", "containerEdits": {"env": ["LM_LICENSE_FILE=27000@a:27000@b", "OPTS=x=y z"]}}]}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := []byte(tc.want)
			if filepath.Ext(tc.want) == ".json" {
				var err error
				if want, err = os.ReadFile(tc.want); err != nil {
					t.Fatal(err)
				}
			}
			got, err := encodeSpec(buildSpec(tc.uid, tc.env))
			if err != nil {
				t.Fatalf("encodeSpec: %v", err)
			}
			if diff := cmp.Diff(decodeJSON(t, want), decodeJSON(t, got)); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCDIDeviceIDAndFileName(t *testing.T) {
	if diff := cmp.Diff("licenses.adminsched.io/seat="+string(testUID), CDIDeviceID(testUID)); diff != "" {
		t.Errorf("CDIDeviceID (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("licenses.adminsched.io_seat_"+string(testUID)+".json", SpecFileName(testUID)); diff != "" {
		t.Errorf("SpecFileName (-want +got):\n%s", diff)
	}
}

func TestValidateClaimUID(t *testing.T) {
	for _, tc := range []struct {
		uid     types.UID
		wantErr bool
	}{
		{uid: testUID},
		{uid: "a"},
		{uid: "", wantErr: true},
		{uid: "../../etc/cron.d/x", wantErr: true},
		{uid: "a/b", wantErr: true},
		{uid: ".hidden", wantErr: true},
		{uid: "-a", wantErr: true},
		{uid: "a_b", wantErr: true},
		{uid: "a\x00b", wantErr: true},
		{uid: "0123456789012345678901234567890123456789012345678901234567890123", wantErr: true}, // 64
		{uid: "012345678901234567890123456789012345678901234567890123456789012"},                 // 63
	} {
		t.Run(fmt.Sprintf("%q", tc.uid), func(t *testing.T) {
			err := validateClaimUID(tc.uid)
			if (err != nil) != tc.wantErr {
				t.Errorf("validateClaimUID(%q) = %v, want error %v", tc.uid, err, tc.wantErr)
			}
		})
	}
}

func listDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(data)
	}
	return files
}

func TestSpecDirWriteRemove(t *testing.T) {
	dir := t.TempDir()
	d := specDir(dir)
	name := SpecFileName(testUID)
	path := filepath.Join(dir, name)

	if err := d.write(testUID, []byte("one\n")); err != nil {
		t.Fatalf("write: %v", err)
	}
	if diff := cmp.Diff(map[string]string{name: "one\n"}, listDir(t, dir)); diff != "" {
		t.Errorf("after write (-want +got):\n%s", diff)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o644 {
		t.Errorf("mode %v, want 0644", got)
	}

	// The same bytes again: the file is not replaced (same inode).
	if err := d.write(testUID, []byte("one\n")); err != nil {
		t.Fatalf("write again: %v", err)
	}
	fi2, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(fi, fi2) {
		t.Errorf("an identical write replaced the file")
	}

	// Other bytes replace it, with no temporary file left behind.
	if err := d.write(testUID, []byte("two\n")); err != nil {
		t.Fatalf("write other: %v", err)
	}
	if diff := cmp.Diff(map[string]string{name: "two\n"}, listDir(t, dir)); diff != "" {
		t.Errorf("after rewrite (-want +got):\n%s", diff)
	}

	for i := range 2 {
		if err := d.remove(testUID); err != nil {
			t.Fatalf("remove #%d: %v", i+1, err)
		}
	}
	if diff := cmp.Diff(map[string]string{}, listDir(t, dir)); diff != "" {
		t.Errorf("after remove (-want +got):\n%s", diff)
	}
}

func TestSpecDirWriteFailsCleanly(t *testing.T) {
	// A directory that does not exist: an error naming the spec, no panic.
	d := specDir(filepath.Join(t.TempDir(), "missing"))
	if err := d.write(testUID, []byte("x")); err == nil {
		t.Fatal("write into a missing directory succeeded")
	}
}
