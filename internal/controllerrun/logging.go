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

package controllerrun

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	_ "k8s.io/component-base/logs/json/register" // --logging-format=json
	"k8s.io/klog/v2"
)

// Logging is a binary's logging set-up: component-base's logging flags
// (-v, --logging-format=json, ...), applied when a command starts.
type Logging struct {
	options *logs.Options
}

// NewLogging is a Logging with component-base's defaults.
func NewLogging() *Logging {
	return &Logging{options: logs.NewOptions()}
}

// AddFlags registers the logging flags on fs, usually the root command's
// persistent flags.
func (l *Logging) AddFlags(fs *pflag.FlagSet) {
	logsapi.AddFlags(l.options, fs)
}

// Start applies the logging flags, once per process, and gives cmd a
// context with klog's logger that SIGTERM (a pod being stopped) or an
// interrupt cancels, so that a role can stop cleanly: release its Lease,
// remove its sockets. Call it from a PersistentPreRunE.
func (l *Logging) Start(cmd *cobra.Command) error {
	if err := logsapi.ValidateAndApply(l.options, nil); err != nil {
		return err
	}
	ctx, _ := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
	cmd.SetContext(klog.NewContext(ctx, klog.Background()))
	return nil
}
