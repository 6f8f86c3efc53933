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

package controller

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/seatcheck"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/source"
)

// world is a license server and the cluster's claims, as a property test
// drives them. The server is a real one in what matters: it refuses a
// checkout when every seat is checked out.
type world struct {
	r     *rand.Rand
	clk   *testingclock.FakeClock
	total int
	// desktops are outside checkouts by host; a pod's checkout that
	// lingers after its claim is released is one too.
	desktops map[string]int
	claims   []*resourceapi.ResourceClaim
	// checkedOut are the seats each claim's pod has checked out.
	checkedOut map[string]int
	down       bool
	// listed: the server lists checkouts by host (lmstat); else it gives
	// counts only and the pods check out as they start.
	listed bool
	next   int
}

func (w *world) inUse() int {
	n := 0
	for _, c := range w.desktops {
		n += c
	}
	for _, c := range w.checkedOut {
		n += c
	}
	return n
}

func (w *world) external() int {
	n := 0
	for _, c := range w.desktops {
		n += c
	}
	return n
}

func (w *world) Read(context.Context) (source.Reading, error) {
	if w.down {
		return source.Reading{}, errors.New("connection refused")
	}
	f := source.Feature{Total: w.total, InUse: w.inUse()}
	if w.listed {
		for _, host := range slices.Sorted(mapsKeys(w.desktops)) {
			f.Checkouts = append(f.Checkouts, source.Checkout{User: "u", Host: host, Count: w.desktops[host]})
		}
		for _, c := range w.claims {
			if n := w.checkedOut[string(c.UID)]; n > 0 {
				// Pods' host names as the server may show them.
				host := c.Name
				if w.r.IntN(3) == 0 {
					host = strings.ToUpper(host)
				}
				f.Checkouts = append(f.Checkouts, source.Checkout{User: "root", Host: host, Count: n})
			}
		}
	}
	return source.Reading{Features: map[string]source.Feature{"CAD": f}}, nil
}

// checkOut checks n seats out for the claim's pod, if the server has them.
func (w *world) checkOut(uid string, n int) {
	if w.inUse()+n <= w.total {
		w.checkedOut[uid] += n
	}
}

// TestPropertyNeverOverOffered drives random sequences through the
// controller and the scheduler's allocator: claims (some tolerating every
// taint, some asking for several seats, in both forms) allocated and
// released, pods checking out, desktops checking out and in (named like
// pods, with a domain), totals up and down, the server failing, the
// controller restarted, the device mode switched, time passing the settle
// window. After every step the checker holds. While the server cannot be
// read, the outside world stands still: within staleAfter the driver serves
// its last reading, and no driver can see changes it cannot read.
func TestPropertyNeverOverOffered(t *testing.T) {
	runs := 300
	if testing.Short() {
		runs = 50
	}
	for seed := range uint64(runs) {
		for _, listed := range []bool{true, false} {
			if err := propertyRun(t, seed, listed, 60); err != nil {
				t.Fatalf("seed %d, listed %t: %v", seed, listed, err)
			}
		}
	}
}

func propertyRun(t *testing.T, seed uint64, listed bool, steps int) error {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(seed, 41))
	w := &world{r: r, clk: testingclock.NewFakeClock(time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)),
		total: 1 + r.IntN(8), desktops: map[string]int{}, checkedOut: map[string]int{}, listed: listed}
	cfg := testConfig(t, config.FailClosed, config.Feature{Name: "CAD"})
	cfg.StaleAfter.Duration = cfg.PollInterval.Duration
	modes := []config.Devices{config.PerSeat, config.Shared}
	start := func() *controller {
		c := newController(Options{Config: cfg, Source: w, Clock: w.clk})
		for _, claim := range w.claims {
			c.claims.set(claim)
		}
		return c
	}
	cfg.Devices = modes[r.IntN(2)]
	c := start()
	cls := classesOf(cfg)
	class := cfg.Features[0].DeviceClassName
	var checker seatcheck.Checker
	var gen int64
	var trace []string
	for step := range steps {
		var did string
		switch op := r.IntN(12); {
		case op < 4: // a pod asks for seats
			w.next++
			n := int64(1 + r.IntN(3))
			claim := seatClaim("ns"+fmt.Sprint(r.IntN(2)), fmt.Sprintf("job-%d", w.next), class, n, r.IntN(2) == 0, r.IntN(2) == 0)
			gen++
			ok := allocate(t, claim, w.claims, cls, published(c.resources(ctx), gen), w.clk.Now())
			did = fmt.Sprintf("claim %s for %d (capacity %t, tolerant %t): %t", claim.Name, n, claim.Spec.Devices.Requests[0].Exactly.Capacity != nil, claim.Spec.Devices.Requests[0].Exactly.Tolerations != nil, ok)
			if ok {
				w.claims = append(w.claims, claim)
				c.claims.set(claim)
				if !listed && !w.down {
					// Counts only: the pod checks out as it starts, well
					// inside the settle window.
					w.checkOut(string(claim.UID), seatsOf(claim))
				}
			}
		case op == 4 && len(w.claims) > 0: // a pod ends; its checkout may linger
			i := r.IntN(len(w.claims))
			claim := w.claims[i]
			if n := w.checkedOut[string(claim.UID)]; n > 0 && r.IntN(2) == 0 {
				w.desktops[claim.Name] += n
			}
			delete(w.checkedOut, string(claim.UID))
			w.claims = slices.Delete(w.claims, i, i+1)
			c.claims.remove(claim.UID)
			did = "release " + claim.Name
		case op >= 5 && op <= 8 && w.down:
			// Unreachable: no checkout or checkin, and the driver serves its
			// last reading until staleAfter; nothing can see through that,
			// so the outside stands still.
			did = "nothing while down"
		case op == 5 && len(w.claims) > 0 && listed: // a pod checks its seats out
			claim := w.claims[r.IntN(len(w.claims))]
			if w.checkedOut[string(claim.UID)] == 0 {
				w.checkOut(string(claim.UID), seatsOf(claim))
			}
			did = "checkout by " + claim.Name
		case op == 6: // a desktop checks a seat out, if the server has one
			hosts := []string{"ws1", "ws2.corp.example.com", fmt.Sprintf("job-%d.corp.example.com", 1+r.IntN(max(1, w.next)))}
			host := hosts[r.IntN(len(hosts))]
			if w.inUse() < w.total {
				w.desktops[host]++
			}
			did = "desktop checkout " + host
		case op == 7 && len(w.desktops) > 0: // a desktop checks in
			host := slices.Sorted(mapsKeys(w.desktops))[r.IntN(len(w.desktops))]
			if w.desktops[host]--; w.desktops[host] == 0 {
				delete(w.desktops, host)
			}
			did = "checkin " + host
		case op == 8: // the license file changes
			w.total = max(0, w.total+r.IntN(5)-2)
			did = fmt.Sprintf("total %d", w.total)
		case op == 9: // the server goes down or comes back
			w.down = !w.down
			did = fmt.Sprintf("down %t", w.down)
		case op == 10: // restart, maybe in the other mode
			if r.IntN(2) == 0 {
				cfg.Devices = modes[1-slices.Index(modes, cfg.Devices)]
			}
			c = start()
			did = "restart in " + string(cfg.Devices)
		default: // time passes
			w.clk.Step(time.Duration(1+r.IntN(90)) * time.Second)
			did = "time " + w.clk.Now().Format("15:04:05")
		}
		if !listed && !w.down {
			// Counts only: pods check out as they start, inside the settle
			// window (those seated while the server was down, once it is up).
			for _, claim := range w.claims {
				if w.checkedOut[string(claim.UID)] == 0 {
					w.checkOut(string(claim.UID), seatsOf(claim))
				}
			}
		}
		c.read(ctx)
		gen++
		state := seatcheck.State{Claims: w.claims, Slices: published(c.resources(ctx), gen),
			Truth: map[string]seatcheck.Truth{"cad": {Total: w.total, External: w.external()}}}
		trace = append(trace, fmt.Sprintf("%2d %s [total %d, external %d, in use %d, %s]", step, did, w.total, w.external(), w.inUse(), cfg.Devices))
		if err := checker.Check(state); err != nil {
			return fmt.Errorf("%w\nsteps:\n%s", err, strings.Join(trace, "\n"))
		}
	}
	return nil
}

func seatsOf(claim *resourceapi.ResourceClaim) int {
	n := 0
	for _, r := range claim.Status.Allocation.Devices.Results {
		n += seatcheck.Seats(r)
	}
	return n
}
