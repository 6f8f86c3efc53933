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

package source

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"k8s.io/klog/v2"
)

// maxStderrBytes caps what is kept of the command's standard error; the
// error message quotes at most maxStderrQuote of it.
const (
	maxStderrBytes = 64 << 10
	maxStderrQuote = 1 << 10
)

// LMStat runs lmutil lmstat -a and parses its report.
type LMStat struct {
	command []string
	timeout time.Duration
	now     func() time.Time
}

var _ Source = &LMStat{}

// NewLMStat returns a source that runs command (no shell) for at most
// timeout each Read.
func NewLMStat(command []string, timeout time.Duration) (*LMStat, error) {
	if len(command) == 0 || command[0] == "" {
		return nil, errors.New("lmstat source: no command")
	}
	if timeout <= 0 {
		return nil, fmt.Errorf("lmstat source: timeout %s must be positive", timeout)
	}
	return &LMStat{command: append([]string(nil), command...), timeout: timeout, now: time.Now}, nil
}

// Read runs the command once. A non-zero exit status is an error even when
// the command printed a report: lmstat documents no exit status, and the
// report of a run that failed may lack a server it could not reach, whose
// features would then look unknown one poll and back the next.
func (s *LMStat) Read(ctx context.Context) (Reading, error) {
	logger := klog.FromContext(ctx)
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()

	cmd := exec.CommandContext(ctx, s.command[0], s.command[1:]...)
	// Past the cap the command is killed at once; nothing waits on a full pipe.
	stdout := &capWriter{max: MaxLMStatBytes, full: cancel}
	stderr := &capWriter{max: maxStderrBytes}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// A child the command left behind may hold the pipes open: do not wait
	// for it past the kill.
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	name := s.command[0]
	switch {
	case stdout.over:
		return Reading{}, fmt.Errorf("lmstat command %s printed more than %d MiB, the most read; it was stopped", name, MaxLMStatBytes>>20)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return Reading{}, fmt.Errorf("lmstat command %s did not finish within its timeout of %s%s", name, s.timeout, stderr.quote())
	case ctx.Err() != nil:
		return Reading{}, fmt.Errorf("lmstat command %s stopped: %w", name, ctx.Err())
	case err != nil:
		return Reading{}, fmt.Errorf("lmstat command %s: %w%s", name, err, stderr.quote())
	}
	if len(stderr.buf) > 0 {
		logger.V(4).Info("lmstat command wrote to its standard error", "command", name, "stderr", truncate(string(stderr.buf), maxStderrQuote))
	}
	r, err := ParseLMStat(bytes.NewReader(stdout.buf), s.now())
	if err != nil {
		return Reading{}, fmt.Errorf("lmstat command %s: %w%s", name, err, stderr.quote())
	}
	logger.V(5).Info("Read lmstat", "features", len(r.Features), "unavailable", len(r.Unavailable))
	return r, nil
}

// capWriter keeps the first max bytes written and drops the rest, calling
// full once when it first drops something.
type capWriter struct {
	buf  []byte
	max  int
	over bool
	full func()
}

func (w *capWriter) Write(p []byte) (int, error) {
	room := w.max - len(w.buf)
	if len(p) <= room {
		w.buf = append(w.buf, p...)
		return len(p), nil
	}
	w.buf = append(w.buf, p[:room]...)
	if !w.over {
		w.over = true
		if w.full != nil {
			w.full()
		}
	}
	// Claim all was written: an error would leave the command blocked on
	// the pipe until the kill.
	return len(p), nil
}

// quote returns ": stderr "..."" for an error message, or "".
func (w *capWriter) quote() string {
	s := strings.TrimSpace(strings.ToValidUTF8(string(w.buf), "?"))
	if s == "" {
		return ""
	}
	return fmt.Sprintf(" (stderr: %q)", truncate(s, maxStderrQuote))
}
