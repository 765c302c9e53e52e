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

	"golang.org/x/sync/errgroup"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/tools"
)

// wallNow is the wall clock in Unix milliseconds.
func wallNow() int64 { return providers.Now() }

// runTogether runs the prepared calls' bodies at once: each on a goroutine
// of an errgroup under the default runtime, bounded only by
// MaxParallelTools; through Runtime.Fan under another. No body waits for
// another body or for a timer to start. Each end event goes out as soon as
// its body and the after-call hook have finished; the caller appends the
// result messages in call order once every body is done.
//
// No body returns an error to the group: one failing body must not cancel
// its siblings.
func (r *run) runTogether(a providers.AssistantMessage, prepared []*call) {
	if r.rt != nil {
		r.rt.Fan(len(prepared), max(r.cfg.Limits.MaxParallelTools, 0), func(i int) { r.finish(a, prepared[i]) })
		return
	}
	var g errgroup.Group
	inline := prepared[len(prepared)-1]
	if r.cfg.Limits.MaxParallelTools > 0 {
		g.SetLimit(r.cfg.Limits.MaxParallelTools)
		inline = nil
	}
	for _, c := range prepared {
		if c == inline {
			break
		}
		g.Go(func() error {
			r.finish(a, c)
			return nil
		})
	}
	if inline != nil {
		// With no limit, the last body runs on this goroutine, which would
		// otherwise only wait: it starts as the others do, right after them.
		r.finish(a, inline)
	}
	_ = g.Wait()
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
