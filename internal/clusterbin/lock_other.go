//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

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

package clusterbin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// lock creates path exclusively, calling waiting once if it exists, and
// returns its removal. Without flock a killed build leaves the file behind:
// the error of a wait that ends says to remove it.
func lock(ctx context.Context, path string, waiting func()) (func(), error) {
	for told := false; ; {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			_ = f.Close()
			return func() { _ = os.Remove(path) }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, cacheDirError(path, err)
		}
		if !told {
			waiting()
			told = true
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the lock %s (remove it if no playground is building): %w", path, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
