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

// Package filelimit reads files whole only when they are small enough:
// decoding YAML takes many times a file's size in memory, so every file the
// playground decodes is capped before it is read.
package filelimit

import (
	"fmt"
	"io"
	"os"
)

// Read reads the file at path if it holds at most limit bytes.
// what names the kind of file in errors. A device (/dev/zero) is refused; a
// pipe is read up to the limit.
func Read(path string, limit int64, what string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := checkFileInfo(path, fi, limit, what); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, tooLargeError(path, limit, what)
	}
	return data, nil
}

// CheckSize refuses a file that another library will read whole (a
// kubeconfig, read by client-go): a device, or a regular file of more than
// limit bytes. A file that does not exist passes: the reader reports it.
func CheckSize(path string, limit int64, what string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	return checkFileInfo(path, fi, limit, what)
}

func checkFileInfo(path string, fi os.FileInfo, limit int64, what string) error {
	switch {
	case fi.Mode()&os.ModeDevice != 0:
		return fmt.Errorf("%s is a device, not a regular file: a %s must be a file", path, what)
	case fi.Mode().IsRegular() && fi.Size() > limit:
		return tooLargeError(path, limit, what)
	}
	return nil
}

func tooLargeError(path string, limit int64, what string) error {
	return fmt.Errorf("%s is larger than %d MiB (%d bytes), the most a %s may hold", path, limit>>20, limit, what)
}
