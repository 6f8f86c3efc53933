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

package filelimit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRead: a regular file is read up to the limit and refused beyond it
// by its size, a device is refused, and CheckSize says the same without
// reading.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	at, over := filepath.Join(dir, "at"), filepath.Join(dir, "over")
	if err := os.WriteFile(at, bytes.Repeat([]byte("x"), 10), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(over, bytes.Repeat([]byte("x"), 11), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path, want string
	}{
		{path: at},
		{path: over, want: over + " is larger than 0 MiB (10 bytes), the most a test file may hold"},
		{path: "/dev/zero", want: "/dev/zero is a device, not a regular file: a test file must be a file"},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.path), func(t *testing.T) {
			data, err := Read(tt.path, 10, "test file")
			checkErr := CheckSize(tt.path, 10, "test file")
			if tt.want == "" {
				if err != nil || checkErr != nil || len(data) != 10 {
					t.Fatalf("Read: %d bytes, %v; CheckSize: %v", len(data), err, checkErr)
				}
				return
			}
			for _, e := range []error{err, checkErr} {
				if e == nil || !strings.Contains(e.Error(), tt.want) {
					t.Errorf("error %v, want %q", e, tt.want)
				}
			}
		})
	}
	if err := CheckSize(filepath.Join(dir, "missing"), 10, "test file"); err != nil {
		t.Errorf("CheckSize of a missing file: %v, want nil (the reader reports it)", err)
	}
}

// TestReadPipe: what is not a regular file (a pipe) is read up
// to the cap, and refused beyond it.
func TestReadPipe(t *testing.T) {
	for _, size := range []int{10, 11} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			go func() {
				_, _ = w.Write(bytes.Repeat([]byte("x"), size))
				_ = w.Close()
			}()
			defer func() { _ = r.Close() }()
			data, err := Read(fmt.Sprintf("/dev/fd/%d", r.Fd()), 10, "test file")
			if size <= 10 && (err != nil || len(data) != size) {
				t.Fatalf("got %d bytes, %v; want %d bytes", len(data), err, size)
			}
			if size > 10 && (err == nil || !strings.Contains(err.Error(), "larger than 0 MiB (10 bytes), the most a test file may hold")) {
				t.Fatalf("error %v, want larger than the cap", err)
			}
		})
	}
}
