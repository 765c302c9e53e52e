package loop

// The default runtime (Config.Runtime nil): the wall clock, goroutines and
// channels. This is the one file of the package that reads the clock,
// starts goroutines, makes timers or waits on a channel; a test holds the
// other files to that (TestOnlyWallRuntimeBlocks).

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/tools"
)

// wallNow is the wall clock in Unix milliseconds.
func wallNow() int64 { return providers.Now() }

// runTogether runs the prepared calls' bodies at once: under the default
// runtime on the run's workers (see workers) and on this goroutine,
// bounded only by MaxParallelTools; through Runtime.Fan under another. No
// body waits for another body or for a timer to start. Each end event goes
// out as soon as its body and the after-call hook have finished; the
// caller appends the result messages in call order once every body is
// done.
//
// One failing body does not stop its siblings.
func (r *run) runTogether(a providers.AssistantMessage, prepared []*call) {
	if r.rt != nil {
		r.fan(a, prepared)
		return
	}
	k := len(prepared) // the bodies that may run at once
	if lim := r.cfg.Limits.MaxParallelTools; lim > 0 {
		k = min(k, lim)
	}
	w := &r.workers
	if w.wake == nil {
		w.wake = make(chan struct{})
	}
	w.a, w.batch = a, prepared
	w.next.Store(0)
	// k takers: k-1 workers and this goroutine, which would otherwise
	// only wait. Every worker of the run is parked or on its way to park
	// (the last batch waited for each it woke to find no body left), so
	// a send finds one within the time a new goroutine takes to start;
	// the run starts a worker only when it has fewer than k-1. Every
	// body has a taker running or runnable from now on, so none waits
	// for another to start, and a run keeps as many workers as its
	// largest batch needs.
	w.busy.Add(k - 1)
	for i := range k - 1 {
		if i < w.n {
			w.wake <- struct{}{}
		} else {
			w.n++
			w.alive.Add(1)
			go r.work()
		}
	}
	r.take()
	w.busy.Wait()
	w.a, w.batch = providers.AssistantMessage{}, nil
}

// fan runs the bodies through Runtime.Fan. (A function of its own: the
// closure takes a, which would otherwise cost the default runtime's
// batches an allocation too.)
func (r *run) fan(a providers.AssistantMessage, prepared []*call) {
	r.rt.Fan(len(prepared), max(r.cfg.Limits.MaxParallelTools, 0), func(i int) { r.finish(a, prepared[i]) })
}

// workers are the goroutines that run a parallel batch's bodies under the
// default runtime. A batch starts one only when the run has fewer than it
// needs; between batches the workers stay parked, so a batch of a run
// wakes goroutines rather than making one, and a closure, per body. The
// run's end stops them (see stop).
type workers struct {
	wake  chan struct{}  // a parked worker takes a send: a batch has bodies to take
	n     int            // the workers started; only the run's goroutine reads it
	alive sync.WaitGroup // the workers started and not yet stopped

	// The batch running, set before any worker is woken and cleared
	// after busy is done: its message, its bodies and the next to take.
	a     providers.AssistantMessage
	batch []*call
	next  atomic.Int64
	busy  sync.WaitGroup // the workers woken for the batch, until each finds no body left
}

// work is a worker: it takes bodies of the batch it was started or woken
// for until none is left, then parks until the next batch or the run's end.
func (r *run) work() {
	defer r.workers.alive.Done()
	for {
		r.take()
		r.workers.busy.Done()
		if _, ok := <-r.workers.wake; !ok {
			return
		}
	}
}

// take runs the batch's next body not yet taken, and the next, until none
// is left. A body's end event goes out as it returns (finish).
func (r *run) take() {
	w := &r.workers
	for {
		i := w.next.Add(1) - 1
		if i >= int64(len(w.batch)) {
			return
		}
		r.finish(w.a, w.batch[i])
	}
}

// stop ends the workers, all parked by then (every batch waits for its
// own), and waits until they have returned: a run leaves none behind.
func (w *workers) stop() {
	if w.wake != nil {
		close(w.wake)
		w.alive.Wait()
		w.wake, w.n = nil, 0
	}
}

// wallWithin runs the body on its own goroutine and waits for it or for
// the timeout's timer.
func (r *run) wallWithin(ctx context.Context, c *call, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type outcome struct {
		res tools.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := c.inv.Run(ctx)
		done <- outcome{res, err}
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case o := <-done:
		return r.returned(ctx, c, o.res, o.err, timeout)
	case <-timer.C:
		c.updates.settle()
		return timedOut(c.tc.Name, timeout)
	}
}

// deadlines hands the bodies under the default timeout d a context that
// ends at least d and at most d+d/16 after they start: one context serves
// every body that starts while its deadline is more than d away, so the
// default costs a timer every d/32 of a run's time, not a timer, a clock
// reading or a goroutine per call. A body's fast path is one atomic load;
// a timer marks the context stale d/32 after it was made (while its
// deadline is still d+d/32 away, room for a late timer), and the next body
// makes a new one.
type deadlines struct {
	cur  atomic.Pointer[sharedDeadline]
	mu   sync.Mutex        // held to make a new one
	live []*sharedDeadline // until the run ends or their deadline passes
}

type sharedDeadline struct {
	ctx    context.Context
	cancel context.CancelFunc
	stale  atomic.Bool
	timer  *time.Timer // marks it stale
}

func (dl *deadlines) get(parent context.Context, d time.Duration) context.Context {
	if s := dl.cur.Load(); s != nil && !s.stale.Load() {
		return s.ctx
	}
	dl.mu.Lock()
	defer dl.mu.Unlock()
	if s := dl.cur.Load(); s != nil && !s.stale.Load() {
		return s.ctx
	}
	ctx, cancel := context.WithDeadline(parent, time.Now().Add(d+d/16))
	s := &sharedDeadline{ctx: ctx, cancel: cancel}
	s.timer = time.AfterFunc(d/32, func() { s.stale.Store(true) })
	// A context whose deadline passed serves no body; the others may still
	// serve one of this batch, so they stay until the run ends.
	kept := dl.live[:0]
	for _, l := range dl.live {
		if l.ctx.Err() == nil {
			kept = append(kept, l)
		} else {
			l.timer.Stop()
		}
	}
	dl.live = append(kept, s)
	dl.cur.Store(s)
	return ctx
}

// release ends the contexts and their timers at the end of the run.
func (dl *deadlines) release() {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	for _, l := range dl.live {
		l.timer.Stop()
		l.cancel()
	}
	dl.live = nil
	dl.cur.Store(nil)
}
