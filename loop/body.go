package loop

// The body: a prepared call's body run under its timeout, the after-call
// hooks, and the result held to its cap (resultcap.go).

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/tools"
)

// execute runs a prepared call's body and the after-call hooks, leaving the
// outcome in c.
//
// Parallel bodies run on the run's workers, whose stacks start small: the
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
	switch {
	case set:
	case r.rt == nil:
		ctx = r.deadlines.get(r.ctx, timeout)
	default:
		var cancel context.CancelFunc
		ctx, cancel = r.rt.WithTimeout(r.ctx, timeout)
		defer cancel()
	}
	if ctx, err = r.stepContext(ctx, Step{Kind: StepTool, Model: r.cfg.Model, Call: c.tc}); err != nil {
		return err
	}
	ctx = c.ctx.Init(ctx, c.tc.ID, c)
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

// runBodyWithin runs the body so that a body that ignores cancellation
// cannot hold the run past a timeout that was set: on its own goroutine
// under the default runtime (see wallWithin), through Runtime.Await under
// another. Its late result is discarded when it finally returns.
func (r *run) runBodyWithin(ctx context.Context, c *call, timeout time.Duration) error {
	if r.rt == nil {
		return r.wallWithin(ctx, c, timeout)
	}
	ctx, cancel := r.rt.WithTimeout(ctx, timeout)
	defer cancel()
	var res tools.Result
	var err error
	if !r.rt.Await(timeout, func() { res, err = c.inv.Run(ctx) }) {
		c.updates.settle()
		return timedOut(c.tc.Name, timeout)
	}
	return r.returned(ctx, c, res, err, timeout)
}

// returned takes the result of a body that returned within its timeout:
// a body that gave up on its own deadline (not the run's: a run whose
// deadline passed is cancelled) timed out.
func (r *run) returned(ctx context.Context, c *call, res tools.Result, err error, timeout time.Duration) error {
	if err == nil {
		c.result = res
	} else if r.ctx.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return timedOut(c.tc.Name, timeout)
	}
	return err
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

// Report publishes a body's progress (tools.ReportProgress) as an update
// event, until the body is over.
func (c *call) Report(p tools.Result) {
	u := &c.updates
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.settled {
		c.r.emitIn(&c.stream, events.ToolExecutionUpdate{ToolCallID: c.tc.ID, ToolName: c.tc.Name, Args: c.tc.Arguments, Partial: c.r.capPartial(c, p)})
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
