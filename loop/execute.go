package loop

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/tools"
)

// runSequential prepares, runs and finishes one call before the next, and
// stops after a call that finds the run cancelled.
func (r *run) runSequential(a providers.AssistantMessage, calls []*call) []*call {
	for i, c := range calls {
		r.emitStart(c)
		if r.preflight(a, c) == nil {
			r.execute(a, c)
		}
		r.emitEnd(c)
		r.emitResult(c, providers.Now())
		if r.ctx.Err() != nil {
			return calls[:i+1]
		}
	}
	return calls
}

// runParallel preflights every call in call order (publishing the end of
// each refused call at once), then runs the prepared bodies together. Each
// end event goes out as its body finishes; the result messages follow in
// call order once all have finished.
func (r *run) runParallel(a providers.AssistantMessage, calls, prepared []*call) []*call {
	seen := len(calls)
	for i, c := range calls {
		r.emitStart(c)
		if r.preflight(a, c) != nil {
			r.emitEnd(c)
		} else {
			prepared = append(prepared, c)
		}
		if r.ctx.Err() != nil {
			seen = i + 1
			break
		}
	}
	if len(prepared) == 1 {
		r.execute(a, prepared[0])
		r.emitEnd(prepared[0])
	} else if len(prepared) > 1 {
		r.runTogether(a, prepared)
	}
	now := providers.Now() // the results are made together
	for _, c := range calls[:seen] {
		r.emitResult(c, now)
	}
	return calls[:seen]
}

// execute runs a prepared call's body and the after-call hook, leaving the
// outcome in c.
func (r *run) execute(a providers.AssistantMessage, c *call) {
	res, err := r.runBody(c)
	if err != nil {
		c.result, c.isError = errorResult(err.Error()), true
	} else {
		c.result, c.isError = res, false
	}
	if r.cfg.AfterToolCall != nil {
		r.after(a, c)
	}
	if n, max := textBytes(c.result.Content), limit(r.cfg.MaxResultBytes, DefaultMaxResultBytes); n > max {
		c.result, c.isError = errorResult(oversizedResultText(c.tc.Name, n, max)), true
	}
}

func textBytes(content []providers.Content) int {
	n := 0
	for _, b := range content {
		if t, ok := b.(providers.Text); ok {
			n += len(t.Text)
		}
	}
	return n
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

// runBody runs the tool body with panic recovery and the tool's timeout.
func (r *run) runBody(c *call) (tools.Result, error) {
	u := &c.updates
	defer u.settle()
	update := func(p tools.Result) {
		u.mu.Lock()
		defer u.mu.Unlock()
		if !u.settled {
			r.emit(events.ToolExecutionUpdate{ToolCallID: c.tc.ID, ToolName: c.tc.Name, Args: c.tc.Arguments, Partial: p})
		}
	}
	timeout := c.tool.Timeout
	if timeout == 0 {
		timeout = r.cfg.ToolTimeout
	}
	if timeout <= 0 {
		return callBody(r.ctx, c, update)
	}
	// With a timeout the body runs on its own goroutine, so that a body
	// that ignores cancellation cannot hold the run past its deadline. Its
	// late result is discarded when it finally returns.
	ctx, cancel := context.WithTimeout(r.ctx, timeout)
	defer cancel()
	type outcome struct {
		res tools.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := callBody(ctx, c, update)
		done <- outcome{res, err}
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case o := <-done:
		return o.res, o.err
	case <-timer.C:
		u.settle()
		return tools.Result{}, fmt.Errorf("Tool %s timed out after %v", c.tc.Name, timeout)
	}
}

func callBody(ctx context.Context, c *call, update tools.UpdateFunc) (res tools.Result, err error) {
	defer recoverTo(&err)
	return c.tool.Execute(ctx, c.tc.ID, c.bound, update)
}

// after applies the after-call hook's overrides; a failing hook turns the
// call into an error result.
func (r *run) after(a providers.AssistantMessage, c *call) {
	o, err := func() (o AfterResult, err error) {
		defer recoverTo(&err)
		return r.cfg.AfterToolCall(r.ctx, AfterToolCall{Assistant: a, Call: c.tc, Args: tools.Clone(c.args),
			Result: c.result, IsError: c.isError, Context: r.c})
	}()
	if err != nil {
		c.result, c.isError = errorResult(err.Error()), true
		return
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
	if o.IsError != nil {
		c.isError = *o.IsError
	}
}
