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

package config

import (
	"bytes"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/adminsched/scheduler-plugins/internal/filelimit"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver"
)

// MaxFileBytes caps the configuration file: a few thousand features fit.
const MaxFileBytes = 4 << 20

// MaxFeatures and MaxSeats bound what one driver publishes: a pool holds at
// most 128 devices per ResourceSlice, so 10,000 seats are 79 slices.
// MaxSeats bounds the configuration's maxSeats.
const (
	MaxFeatures = 1000
	MaxSeats    = 100000
)

// Load reads, decodes, defaults and validates the file at path.
func Load(path string) (*Configuration, error) {
	data, err := filelimit.Read(path, MaxFileBytes, "license driver configuration")
	if err != nil {
		return nil, err
	}
	c, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Decode decodes data strictly (unknown and duplicate fields are errors, with
// their path), then defaults and validates it.
func Decode(data []byte) (*Configuration, error) {
	c, err := decodeStrict(data)
	if err != nil {
		return nil, err
	}
	SetDefaults(c)
	if errs := Validate(c); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return c, nil
}

// documents counts the YAML documents in data that hold something:
// sigs.k8s.io/yaml decodes the first and drops the others without a word. A
// document that does not parse counts as one; decoding reports it.
func documents(data []byte) int {
	d := yamlv3.NewDecoder(bytes.NewReader(data))
	n := 0
	for {
		var doc yamlv3.Node
		if err := d.Decode(&doc); err != nil {
			if !errors.Is(err, io.EOF) {
				n++
			}
			return n
		}
		if len(doc.Content) > 0 && doc.Content[0].ShortTag() != "!!null" {
			n++
		}
	}
}

// SetDefaults fills what the file leaves out.
func SetDefaults(c *Configuration) {
	if c.PollInterval.Duration == 0 {
		c.PollInterval.Duration = DefaultPollInterval
	}
	if c.SettleWindow == nil {
		c.SettleWindow = &metav1.Duration{Duration: DefaultSettleWindow}
	}
	if c.StaleAfter.Duration == 0 {
		c.StaleAfter.Duration = DefaultStaleAfter
	}
	if c.OnStale == "" {
		c.OnStale = FailClosed
	}
	if c.Devices == "" {
		c.Devices = PerSeat
	}
	if c.MaxSeats == 0 {
		c.MaxSeats = DefaultMaxSeats
	}
	if s := c.Source.LMStat; s != nil && s.Timeout.Duration == 0 {
		s.Timeout.Duration = DefaultTimeout
	}
	if s := c.Source.HTTP; s != nil && s.Timeout.Duration == 0 {
		s.Timeout.Duration = DefaultTimeout
	}
	for i := range c.Features {
		f := &c.Features[i]
		if f.Pool == "" {
			f.Pool = strings.ReplaceAll(strings.ToLower(f.Name), "_", "-")
		}
		if f.ResourceName == "" {
			f.ResourceName = licensedriver.DriverName + "/" + f.Pool
		}
		if f.DeviceClassName == "" {
			f.DeviceClassName = f.Pool + "." + licensedriver.DriverName
		}
	}
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Validate checks a defaulted configuration.
func Validate(c *Configuration) field.ErrorList {
	var errs field.ErrorList
	if c.APIVersion != APIVersion {
		errs = append(errs, field.NotSupported(field.NewPath("apiVersion"), c.APIVersion, []string{APIVersion}))
	}
	if c.Kind != Kind {
		errs = append(errs, field.NotSupported(field.NewPath("kind"), c.Kind, []string{Kind}))
	}
	errs = append(errs, validateSource(&c.Source, field.NewPath("source"))...)
	errs = append(errs, validateFeatures(c, field.NewPath("features"))...)
	for _, d := range []struct {
		name string
		v    time.Duration
		min  time.Duration
	}{
		{"pollInterval", c.PollInterval.Duration, time.Second},
		{"settleWindow", settleWindow(c), 0},
		{"staleAfter", c.StaleAfter.Duration, c.PollInterval.Duration},
	} {
		if d.v < d.min || d.v > 24*time.Hour {
			errs = append(errs, field.Invalid(field.NewPath(d.name), d.v.String(), fmt.Sprintf("must be between %s and 24h", d.min)))
		}
	}
	if c.OnStale != FailClosed && c.OnStale != Keep {
		errs = append(errs, field.NotSupported(field.NewPath("onStale"), c.OnStale, []OnStale{FailClosed, Keep}))
	}
	if c.MaxSeats < 1 || c.MaxSeats > MaxSeats {
		errs = append(errs, field.Invalid(field.NewPath("maxSeats"), c.MaxSeats, fmt.Sprintf("must be between 1 and %d", MaxSeats)))
	}
	if c.Devices != Shared && c.Devices != PerSeat && c.Devices != "" {
		errs = append(errs, field.NotSupported(field.NewPath("devices"), c.Devices, []Devices{Shared, PerSeat}))
	}
	return errs
}

// maxSeats is c's maxSeats, the default when it is not set, MaxSeats when
// it is out of range (Validate reports that).
func maxSeats(c *Configuration) int32 {
	switch {
	case c.MaxSeats == 0:
		return DefaultMaxSeats
	case c.MaxSeats < 0 || c.MaxSeats > MaxSeats:
		return MaxSeats
	}
	return c.MaxSeats
}

// settleWindow is c's settle window, the default when it is not set
// (Validate may be given a configuration SetDefaults has not seen).
func settleWindow(c *Configuration) time.Duration {
	if c.SettleWindow == nil {
		return DefaultSettleWindow
	}
	return c.SettleWindow.Duration
}

func validateSource(s *Source, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	if s.Static != nil {
		n++
	}
	if l := s.LMStat; l != nil {
		n++
		if len(l.Command) == 0 || l.Command[0] == "" {
			errs = append(errs, field.Required(p.Child("lmstat", "command"), "the lmstat command and its arguments, e.g. [lmutil, lmstat, -a, -c, 27000@licsrv]"))
		}
		errs = append(errs, validateTimeout(l.Timeout.Duration, p.Child("lmstat", "timeout"))...)
	}
	if h := s.HTTP; h != nil {
		n++
		u, err := url.Parse(h.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, field.Invalid(p.Child("http", "url"), h.URL, "must be an absolute http or https URL"))
		}
		errs = append(errs, validateTimeout(h.Timeout.Duration, p.Child("http", "timeout"))...)
		if h.CAFile != "" {
			errs = append(errs, validateCAFile(h.CAFile, u, p.Child("http", "caFile"))...)
		}
	}
	if n != 1 {
		errs = append(errs, field.Invalid(p, n, "exactly one of static, lmstat and http must be set"))
	}
	return errs
}

// validateCAFile checks source.http.caFile: with an https url, a readable
// PEM bundle of at least one certificate.
func validateCAFile(path string, u *url.URL, p *field.Path) field.ErrorList {
	if u == nil || u.Scheme != "https" {
		return field.ErrorList{field.Invalid(p, path, "only valid with an https url")}
	}
	data, err := filelimit.Read(path, MaxFileBytes, "CA bundle")
	if err != nil {
		return field.ErrorList{field.Invalid(p, path, fmt.Sprintf("must be a readable PEM file: %v", err))}
	}
	if !x509.NewCertPool().AppendCertsFromPEM(data) {
		return field.ErrorList{field.Invalid(p, path, "must hold at least one PEM certificate, it holds none")}
	}
	return nil
}

func validateTimeout(d time.Duration, p *field.Path) field.ErrorList {
	if d < 100*time.Millisecond || d > 10*time.Minute {
		return field.ErrorList{field.Invalid(p, d.String(), "must be between 100ms and 10m")}
	}
	return nil
}

func validateFeatures(c *Configuration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(c.Features) == 0 {
		errs = append(errs, field.Required(p, "at least one license feature"))
	}
	if len(c.Features) > MaxFeatures {
		return append(errs, field.TooMany(p, len(c.Features), MaxFeatures))
	}
	names, pools, resources, classes := sets.New[string](), sets.New[string](), sets.New[string](), sets.New[string]()
	unique := func(s sets.Set[string], v string, fp *field.Path) {
		if s.Has(v) {
			errs = append(errs, field.Duplicate(fp, v))
		}
		s.Insert(v)
	}
	for i := range c.Features {
		f := &c.Features[i]
		fp := p.Index(i)
		if f.Name == "" {
			errs = append(errs, field.Required(fp.Child("name"), "the feature's name on the license server"))
		}
		unique(names, f.Name, fp.Child("name"))
		for _, msg := range validation.IsDNS1123Subdomain(f.Pool) {
			errs = append(errs, field.Invalid(fp.Child("pool"), f.Pool, msg+" (set pool when the feature's name does not make one)"))
		}
		unique(pools, f.Pool, fp.Child("pool"))
		errs = append(errs, validateResourceName(f.ResourceName, fp.Child("resourceName"))...)
		unique(resources, f.ResourceName, fp.Child("resourceName"))
		for _, msg := range validation.IsDNS1123Subdomain(f.DeviceClassName) {
			errs = append(errs, field.Invalid(fp.Child("deviceClassName"), f.DeviceClassName, msg))
		}
		unique(classes, f.DeviceClassName, fp.Child("deviceClassName"))
		switch {
		case f.Seats == nil && c.Source.Static != nil:
			errs = append(errs, field.Required(fp.Child("seats"), "the static source serves the seats configured here"))
		case f.Seats != nil && (*f.Seats < 0 || *f.Seats > maxSeats(c)):
			errs = append(errs, field.Invalid(fp.Child("seats"), *f.Seats, fmt.Sprintf("must be between 0 and maxSeats (%d)", maxSeats(c))))
		}
		for k := range f.Env {
			if !envName.MatchString(k) {
				errs = append(errs, field.Invalid(fp.Child("env").Key(k), k, "must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*)"))
			}
		}
	}
	return errs
}

// validateResourceName accepts what the API server accepts as an extended
// resource name: a domain-prefixed name outside kubernetes.io.
func validateResourceName(name string, p *field.Path) field.ErrorList {
	prefix, _, ok := strings.Cut(name, "/")
	if !ok || strings.HasSuffix(prefix, "kubernetes.io") || strings.HasPrefix(name, corev1.ResourceHugePagesPrefix) {
		return field.ErrorList{field.Invalid(p, name, "must be an extended resource name: <domain>/<name>, not in kubernetes.io")}
	}
	// What the API server checks of a DeviceClass's extendedResourceName
	// (IsExtendedResourceName): quota names a request of it
	// "requests.<name>", so that prefix is refused and the name must stay
	// qualified with it.
	if rest, ok := strings.CutPrefix(name, corev1.DefaultResourceRequestsPrefix); ok {
		return field.ErrorList{field.Invalid(p, name, fmt.Sprintf("must not start with %q: quota reads that as a request of %s", corev1.DefaultResourceRequestsPrefix, rest))}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	if len(errs) > 0 {
		return errs
	}
	for _, msg := range validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix + name) {
		errs = append(errs, field.Invalid(p, name, fmt.Sprintf("%s (with quota's %q before it)", msg, corev1.DefaultResourceRequestsPrefix)))
	}
	return errs
}
