package loop

// The body: a prepared call's body run under its timeout, the after-call
// hooks, and the result held to its cap (resultcap.go).

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/internal/toolctx"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/tools"
)

// execute runs a prepared call's body and the after-call hooks, leaving the
// outcome in c.
//
// Parallel bodies run on fresh goroutines, whose stacks start small: the
// functions here keep their frames small (results go straight into c, the
// rare paths are functions of their own) so that a body that needs little
// stack does not cost a stack copy.
func (r *run) execute(a providers.AssistantMessage, c *call) {
	if err := r.runBody(c); err != nil {
		r.failWith(c, err)
	}
	for _, hook := range r.h.after {
		if !r.after(hook, a, c) {
			break
		}
	}
	r.capResult(c)
}

// runBody runs the tool body with the tool's timeout, leaving a successful
// result in c. The body's context carries the call (tools.CallID,
// tools.ReportProgress); panics come back as errors from Run.
func (r *run) runBody(c *call) (err error) {
	defer c.updates.settle()
	timeout, set := r.timeout(c.tool)
	ctx := r.ctx
	if !set {
		ctx = r.deadlines.get(r.ctx, timeout)
	}
	if ctx, err = r.stepContext(ctx, Step{Kind: StepTool, Model: r.cfg.Model, Call: c.tc}); err != nil {
		return err
	}
	ctx = toolctx.With(ctx, c.tc.ID, r.updater(c))
	if set && timeout > 0 {
		return r.runBodyWithin(ctx, c, timeout)
	}
	c.result, err = c.inv.Run(ctx)
	if err != nil && !set && r.ctx.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return timedOut(c.tc.Name, timeout) // it gave up at the default timeout
	}
	return err
}

// timeout is the bound on one run of t's body, and whether it was set (the
// tool's own Timeout, or Limits.ToolTimeout) rather than the default. A
// set bound of 0 is NoLimit.
func (r *run) timeout(t *tools.Tool) (d time.Duration, set bool) {
	for _, d := range [2]time.Duration{t.Timeout(), r.cfg.Limits.ToolTimeout} {
		switch {
		case d > 0:
			return d, true
		case d < 0:
			return 0, true
		}
	}
	return DefaultToolTimeout, false
}

// runBodyWithin runs the body on its own goroutine, so that a body that
// ignores cancellation cannot hold the run past a timeout that was set.
// Its late result is discarded when it finally returns.
func (r *run) runBodyWithin(ctx context.Context, c *call, timeout time.Duration) error {
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
		if o.err == nil {
			c.result = o.res
		} else if r.ctx.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			// The body gave up on the same deadline: its own, not the
			// run's (a run whose deadline passed is cancelled).
			return timedOut(c.tc.Name, timeout)
		}
		return o.err
	case <-timer.C:
		c.updates.settle()
		return timedOut(c.tc.Name, timeout)
	}
}

// errTimedOut marks a body that passed its timeout.
var errTimedOut = errors.New("the tool timed out")

// timedOut is the error of a body that passed its timeout: the text the
// model reads, marked.
func timedOut(name string, d time.Duration) error {
	return &timeoutError{text: timeoutText(name, d)}
}

type timeoutError struct{ text string }

func (e *timeoutError) Error() string { return e.text }

func (e *timeoutError) Is(target error) bool { return target == errTimedOut }

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

// updates forwards a body's partial results as events until the body is
// over; later calls are ignored.
type updates struct {
	mu      sync.Mutex
	settled bool
}

func (u *updates) settle() {
	u.mu.Lock()
	u.settled = true
	u.mu.Unlock()
}

// updater returns the function through which a body reports progress.
func (r *run) updater(c *call) func(tools.Result) {
	return func(p tools.Result) {
		u := &c.updates
		u.mu.Lock()
		defer u.mu.Unlock()
		if !u.settled {
			r.emitIn(&c.stream, events.ToolExecutionUpdate{ToolCallID: c.tc.ID, ToolName: c.tc.Name, Args: c.tc.Arguments, Partial: r.capPartial(c, p)})
		}
	}
}

// failWith turns a body's error into the call's error result: the result
// it carries (tools.ResultError), or its text. The outcome is timeout when
// the body passed its own timeout, aborted when the run was cancelled by
// the time the body gave up (the model still reads the body's own words),
// failed otherwise. A panic's result carries the panic and its stack in
// its details, and they are logged.
func (r *run) failWith(c *call, err error) {
	cancelled := r.ctx.Err() != nil
	how := events.OutcomeFailed
	switch {
	case errors.Is(err, errTimedOut):
		how = events.OutcomeTimeout
	case cancelled:
		how = events.OutcomeAborted
	}
	if re := (*tools.ResultError)(nil); errors.As(err, &re) {
		c.result, c.isError, c.outcome = re.Result, true, how
		return
	}
	c.fail(how, err.Error())
	if pe := (*tools.PanicError)(nil); errors.As(err, &pe) {
		c.result.Details = r.panicked(c, pe)
	}
}

// after applies one after-call hook's overrides and reports whether the
// next hook may run; a failing hook turns the call into an error result.
func (r *run) after(hook func(context.Context, AfterCall) (AfterResult, error), a providers.AssistantMessage, c *call) bool {
	o, err := func() (o AfterResult, err error) {
		defer r.recoverHook("AfterToolCall", &err)
		return hook(r.ctx, AfterCall{Assistant: a, Call: c.tc, Args: c.inv.Args(),
			Result: c.result, IsError: c.isError, Conversation: r.c})
	}()
	if err != nil {
		how := events.OutcomeFailed
		if r.ctx.Err() != nil { // it gave up because the run was cancelled
			how = events.OutcomeAborted
		}
		c.fail(how, err.Error())
		return false
	}
	if o.Content != nil {
		c.result.Content = o.Content
	}
	if o.Details != nil {
		c.result.Details = o.Details
	}
	if o.Usage != nil {
		c.result.Usage = o.Usage
	}
	if o.Terminate != nil {
		c.result.Terminate = *o.Terminate
	}
	if o.IsError != nil && *o.IsError != c.isError {
		c.isError, c.outcome = *o.IsError, "" // the outcome follows the hook's word
	}
	return true
}
