package conformance

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// Stepper is a loop.Runtime that owns scheduling the way a workflow
// engine does: its coroutines (the run's goroutine and every body it
// starts) run one at a time, each until it returns or waits, and the
// Stepper chooses which runs next, by a seeded random order; time is a
// virtual clock that moves only when every coroutine waits, to the first
// instant one of them waits for. A run under it is the same run whatever
// the machine's load, and takes no real time.
//
// Its coroutines are goroutines, but only the Stepper starts them and
// only the one it has chosen runs: each other one is parked on its own
// channel in the Stepper's code. A coroutine's handover happens-before the
// next one runs, so the loop's state needs no more than its own locks.
//
// Its methods must be called from the coroutine that runs (the goroutine
// that made the Stepper, or a body it runs), never from elsewhere.
type Stepper struct {
	now     time.Time
	rng     *rand.Rand
	root    *coroutine   // the goroutine that made the Stepper
	cur     *coroutine   // the one that runs
	cos     []*coroutine // every coroutine not yet finished but the first
	timers  []*vtimer    // the virtual deadlines not yet reached
	started atomic.Int64 // goroutines started, for the tests
	live    atomic.Int64 // of those, not yet finished
	most    int          // see MostAtOnce
}

// coroutine is one of the Stepper's coroutines.
type coroutine struct {
	wake  chan struct{} // the Stepper's hand-over
	ready func() bool   // whether it may run; nil: yes
	done  bool
}

// vtimer is a virtual deadline: a context that WithTimeout made, or a
// sleep's wake-up time (fire nil).
type vtimer struct {
	at   time.Time
	fire func()
}

// Epoch is where a Stepper's clock starts: far from any wall-clock reading,
// so a timestamp that did not come from it stands out.
var Epoch = time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)

// NewStepper returns a Stepper whose clock starts at Epoch and whose order
// follows seed. The goroutine that calls it is its first coroutine.
func NewStepper(seed uint64) *Stepper {
	root := &coroutine{wake: make(chan struct{})}
	return &Stepper{now: Epoch, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), root: root, cur: root}
}

// Now implements loop.Runtime: the virtual clock.
func (s *Stepper) Now() time.Time { return s.now }

// Started reports how many goroutines the Stepper has started, and how
// many of them have not finished.
func (s *Stepper) Started() (started, live int64) { return s.started.Load(), s.live.Load() }

// Fan implements loop.Runtime: each body on a coroutine of its own, no
// more than limit of them started and not finished when limit > 0; the
// caller waits until every one has finished.
func (s *Stepper) Fan(n, limit int, body func(i int)) {
	running, finished := 0, 0
	for i := range n {
		s.spawn(func() bool { return limit <= 0 || running < limit }, func() {
			running++
			s.most = max(s.most, running)
			body(i)
			running--
			finished++
		})
	}
	s.block(func() bool { return finished == n })
}

// MostAtOnce reports the most bodies of one Fan that ran at once (started
// and not finished), for the tests of Limits.MaxParallelTools.
func (s *Stepper) MostAtOnce() int { return s.most }

// WithTimeout implements loop.Runtime: a context that the Stepper ends
// when its clock reaches d from now.
func (s *Stepper) WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	inner, cancel := context.WithCancel(ctx)
	v := &vctx{Context: inner, at: s.now.Add(d)}
	if dl, ok := ctx.Deadline(); ok && dl.Before(v.at) {
		v.at = dl
	}
	t := &vtimer{at: v.at, fire: func() { v.expired.Store(true); cancel() }}
	s.timers = append(s.timers, t)
	return v, func() {
		cancel()
		s.drop(t)
	}
}

// Await implements loop.Runtime: body on a coroutine of its own; the
// caller waits until it finished or the clock reached d from now.
func (s *Stepper) Await(d time.Duration, body func()) bool {
	finished := false
	s.spawn(nil, func() {
		body()
		finished = true
	})
	t := &vtimer{at: s.now.Add(d)}
	s.timers = append(s.timers, t)
	defer s.drop(t)
	s.block(func() bool { return finished || !s.now.Before(t.at) })
	return finished
}

// Sleep waits until the clock has moved d on, or ctx has ended; it
// reports whether the full time passed. It is what a body calls to wait
// under the Stepper, as a workflow calls its engine's sleep.
func (s *Stepper) Sleep(ctx context.Context, d time.Duration) bool {
	if ctx.Err() != nil {
		return false
	}
	t := &vtimer{at: s.now.Add(d)}
	s.timers = append(s.timers, t)
	defer s.drop(t)
	s.block(func() bool { return !s.now.Before(t.at) || ctx.Err() != nil })
	return !s.now.Before(t.at)
}

// Close lets every coroutine finish (bodies abandoned at their timeout
// among them), moving the clock as they wait, and returns once they have.
func (s *Stepper) Close() { s.block(func() bool { return len(s.cos) == 0 }) }

// spawn makes a coroutine that runs f once it is chosen while ready says
// it may; it is parked until then.
func (s *Stepper) spawn(ready func() bool, f func()) {
	co := &coroutine{wake: make(chan struct{}), ready: ready}
	s.cos = append(s.cos, co)
	s.started.Add(1)
	s.live.Add(1)
	go func() {
		<-co.wake
		co.ready = nil
		f()
		co.done = true
		s.remove(co)
		next := s.pick()
		s.live.Add(-1)
		s.cur = next
		next.wake <- struct{}{}
	}()
}

// block parks the running coroutine until ready holds, running the others
// meanwhile.
func (s *Stepper) block(ready func() bool) {
	me := s.cur
	me.ready = ready
	next := s.pick()
	if next == me {
		me.ready = nil
		return
	}
	s.cur = next
	next.wake <- struct{}{}
	<-me.wake
	me.ready = nil
}

// pick chooses the next coroutine to run among those that may: one at
// random. When none may, the clock moves to the first deadline and its
// timers fire; a run in which nothing may ever run again is a bug, and
// panics.
func (s *Stepper) pick() *coroutine {
	all := s.all()
	for {
		var ok []*coroutine
		for _, co := range all {
			if !co.done && (co.ready == nil || co.ready()) {
				ok = append(ok, co)
			}
		}
		if len(ok) > 0 {
			return ok[s.rng.IntN(len(ok))]
		}
		if len(s.timers) == 0 {
			panic("stepper: every coroutine waits and no deadline is set")
		}
		first := s.timers[0].at
		for _, t := range s.timers {
			if t.at.Before(first) {
				first = t.at
			}
		}
		s.now = first
		for _, t := range append([]*vtimer(nil), s.timers...) {
			if !t.at.After(s.now) && t.fire != nil {
				s.drop(t)
				t.fire()
			}
		}
	}
}

// all is the first coroutine and the spawned ones.
func (s *Stepper) all() []*coroutine { return append([]*coroutine{s.root}, s.cos...) }

func (s *Stepper) remove(co *coroutine) {
	for i, o := range s.cos {
		if o == co {
			s.cos = append(s.cos[:i], s.cos[i+1:]...)
			return
		}
	}
}

func (s *Stepper) drop(t *vtimer) {
	for i, o := range s.timers {
		if o == t {
			s.timers = append(s.timers[:i], s.timers[i+1:]...)
			return
		}
	}
}

// vctx is a context the Stepper's clock ends: its Err is
// context.DeadlineExceeded once the clock reached its deadline. Its
// children attach to the context.WithCancel inside it, so deriving from
// it starts no goroutine.
type vctx struct {
	context.Context
	at      time.Time
	expired atomic.Bool
}

func (v *vctx) Deadline() (time.Time, bool) { return v.at, true }

func (v *vctx) Err() error {
	err := v.Context.Err()
	if err != nil && v.expired.Load() {
		return context.DeadlineExceeded
	}
	return err
}
