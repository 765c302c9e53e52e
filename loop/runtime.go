package loop

import (
	"context"
	"time"
)

// A Runtime drives a run: it owns the run's clock, how a parallel batch's
// bodies are started and how the loop waits for a body it may have to give
// up on. Config.Runtime nil is the default runtime: the wall clock, every
// body of a batch at once on goroutines the run keeps parked between
// batches, and channels and timers to wait, as a Go program expects. A workflow engine, whose code may
// neither start goroutines nor block on Go channels nor read the wall clock,
// supplies its own: its coroutines, its deterministic clock, its timers.
//
// Under a Runtime that is not nil the loop reads no clock, starts no
// goroutine and waits on no channel or timer of its own: every timestamp
// (messages, the request's Time, CompactInput.Now) and every deadline it
// sets comes from Now and WithTimeout, every body of a parallel batch runs
// through Fan, and a body with a timeout runs through Await.
//
// The other seams a runtime needs are already values a run is given:
//
//   - The event sink is the handler given to Run. The loop calls it on
//     whichever body is running, one event at a time in the run's order,
//     and waits for it to return: that is the backpressure of the default
//     delivery. A workflow runtime passes a handler that appends to a
//     buffer without I/O, and publishes the buffer from outside.
//   - The step context is Hooks.StepContext: the context of the run, of
//     each model call and of each tool body.
//   - Queued messages are polled (Queue), never waited for: the loop asks
//     before each model call and when the run would end. A Queue under a
//     workflow runtime answers from the workflow's state at once.
//
// The methods are called from the run's goroutine and from the bodies Fan
// and Await run: a runtime that runs bodies at once must allow calls at
// once; one that runs one body at a time sees them one at a time. The
// smallest Runtime (see the example) never moves its clock and runs bodies
// one after another: no deadline passes on it, so every body is waited for.
type Runtime interface {
	// Now is the run's clock. The loop stamps its messages with it and
	// hands it to the provider (providers.Request.Time) and the Compactor
	// (CompactInput.Now), so that they stamp theirs with it too.
	Now() time.Time
	// Fan runs body(0) to body(n-1), each once, in any order, and returns
	// once every one has returned. When limit > 0 no more than limit bodies
	// may be running (started and not returned) at any moment
	// (Limits.MaxParallelTools); 0 puts no bound on them. A body never
	// panics and returns nothing: each records its own outcome.
	Fan(n, limit int, body func(i int))
	// WithTimeout returns a copy of ctx that ends d after Now, on this
	// runtime's clock, with context.DeadlineExceeded as its Err, and the
	// function that releases it early (like context.WithTimeout). The
	// loop uses it for the deadline of every tool body.
	WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc)
	// Await runs body and waits until it has returned or d has passed on
	// this runtime's clock, whichever comes first, and reports whether
	// body returned. A body that has not returned by then goes on,
	// abandoned: the loop never reads what it does after that, and the
	// runtime lets it finish in its own time (its context has ended).
	Await(d time.Duration, body func()) bool
}

// now is the run's clock reading, in Unix milliseconds: the runtime's, or
// the wall clock's (providers.Now) under the default runtime.
func (r *run) now() int64 {
	if r.rt != nil {
		return r.rt.Now().UnixMilli()
	}
	return wallNow()
}

// nowTime is the run's clock for the request and the Compactor: the zero
// time under the default runtime, which asks them to read the wall clock
// themselves, as before the seam (a run reads no clock it does not need).
func (r *run) nowTime() time.Time {
	if r.rt != nil {
		return r.rt.Now()
	}
	return time.Time{}
}
