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

package main

import (
	"io"
	"os"
	"strconv"
	"sync"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
)

// logSink is the destination of the process-wide logger: the log file of
// the current run, nothing between runs. klog's global logger may only be
// set once, before goroutines log (klog.SetLogger is not thread-safe), so
// runs swap the file behind it instead.
type logSink struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		return len(p), nil
	}
	return s.w.Write(p)
}

func (s *logSink) set(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w = w
}

var (
	logOnce   sync.Once
	logOutput = &logSink{}
	logConfig *textlogger.Config
	logger    klog.Logger
)

// setupLogging sends klog (the scheduler's logs) and controller-runtime's
// log to a file: the terminal only gets the playground's own lines.
func setupLogging(path string, verbosity int) (klog.Logger, func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return klog.Logger{}, nil, err
	}
	logOnce.Do(func() {
		logConfig = textlogger.NewConfig(textlogger.Output(logOutput))
		logger = textlogger.NewLogger(logConfig)
		klog.SetLoggerWithOptions(logger, klog.ContextualLogger(true))
		crlog.SetLogger(logger)
	})
	_ = logConfig.Verbosity().Set(strconv.Itoa(verbosity))
	logOutput.set(f)
	return logger, func() {
		// Goroutines still winding down write nowhere.
		logOutput.set(nil)
		_ = f.Close()
	}, nil
}
