package loop

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

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
		r.emitResult(c)
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
func (r *run) runParallel(a providers.AssistantMessage, calls []*call) []*call {
	var prepared []*call
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
	for _, c := range calls[:seen] {
		r.emitResult(c)
	}
	return calls[:seen]
}

// startStagger is how long a body may run before the next one starts;
// see runTogether.
const startStagger = 2 * time.Millisecond

// runTogether runs the prepared calls' bodies at once under an errgroup
// (bounded by MaxParallelTools). No body returns an error to the group: one
// failing body must not cancel its siblings.
//
// Bodies start in call order, each when the previous one has returned or
// has run for startStagger, whichever comes first, so bodies that wait on
// anything (I/O, timers, other goroutines) run together, a fraction of a
// millisecond apart. Each end event goes out when its body finishes, except
// during the start phase: a body that returns before every body has started
// has its end held until then, and those held ends go out in call order.
// That is the reference's order, where every body runs its synchronous part
// (its first updates, say) before any end is published. With
// MaxParallelTools set, nothing is held.
func (r *run) runTogether(a providers.AssistantMessage, prepared []*call) {
	var g errgroup.Group
	limited := r.cfg.MaxParallelTools > 0
	if limited {
		g.SetLimit(r.cfg.MaxParallelTools)
	}
	var endMu sync.Mutex
	starting := !limited
	var held []*call
	endStart := func() {
		endMu.Lock()
		defer endMu.Unlock()
		starting = false
		sort.Slice(held, func(i, j int) bool { return held[i].index < held[j].index })
		for _, c := range held {
			r.emitEnd(c)
		}
		held = nil
	}
	turn := make(chan struct{})
	close(turn)
	for i, c := range prepared {
		mine, next := turn, &baton{ch: make(chan struct{})}
		if i == len(prepared)-1 {
			next.then = endStart // every body has started
		}
		body := func() {
			<-mine
			stop := time.AfterFunc(startStagger, next.pass)
			r.execute(a, c)
			stop.Stop()
			endMu.Lock()
			if starting {
				held = append(held, c)
			} else {
				r.emitEnd(c)
			}
			endMu.Unlock()
			next.pass()
		}
		turn = next.ch
		if i == len(prepared)-1 && !limited {
			body() // the last runs on this goroutine, which is idle otherwise
			break
		}
		g.Go(func() error { body(); return nil })
	}
	_ = g.Wait()
}

// baton lets the next body start, once, and then runs then (if set).
type baton struct {
	ch   chan struct{}
	once sync.Once
	then func()
}

func (b *baton) pass() {
	b.once.Do(func() {
		close(b.ch)
		if b.then != nil {
			b.then()
		}
	})
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
