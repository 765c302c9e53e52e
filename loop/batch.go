package loop

// The batch: one assistant message's tool calls, from the message's own
// limits through the preflight of each call (preflight.go) and the bodies
// (body.go), sequential or parallel, to the result messages in call order.

import (
	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/internal/toolctx"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/tools"
)

// call is one tool call on its way through the batch.
type call struct {
	r    *run
	tc   providers.ToolCall
	tool *tools.Tool
	inv  *tools.Invocation // once the arguments passed the tool's checks
	// refusal, when set, refuses the call before any other check: it is
	// one the message may not make (see executeToolCalls).
	refusal string

	// The outcome, once known.
	result  tools.Result
	isError bool
	outcome events.Outcome
	msg     *providers.ToolResultMessage // where the result message goes
	updates updates                      // the body's progress, until it returns
	stream  stream                       // its updates' numbers, opened by its start
	ctx     toolctx.Call[tools.Result]   // the body's context, made by runBody; c reports its progress
}

// errorResult is the result of a call the loop refused or whose body
// failed: the text, and an empty details object of its own.
func errorResult(text string) tools.Result {
	return tools.Result{Content: []providers.Content{providers.Text{Text: text}}, Details: map[string]any{}}
}

// fail makes the call's result an error result with text, ended as how.
func (c *call) fail(how events.Outcome, text string) *call {
	c.result, c.isError, c.outcome = errorResult(text), true, how
	return c
}

// executeToolCalls runs one assistant message's tool calls and returns
// their result messages in call order, and whether the batch asks the run
// to stop.
func (r *run) executeToolCalls(a providers.AssistantMessage) ([]providers.ToolResultMessage, bool) {
	n := 0
	for _, b := range a.Content {
		if _, ok := b.(providers.ToolCall); ok {
			n++
		}
	}
	// One allocation each for the calls and their results; the lists of
	// pointers reuse the run's scratch space.
	slab := make([]call, 0, n)
	results := make([]providers.ToolResultMessage, n)
	calls, prepared := r.lists(n)
	for _, b := range a.Content {
		if tc, ok := b.(providers.ToolCall); ok {
			i := len(slab)
			slab = append(slab, call{r: r, tc: tc, msg: &results[i]})
			calls[i] = &slab[i]
		}
	}
	r.markRefusals(calls)
	var done []*call
	switch {
	case a.StopReason == providers.StopReasonLength:
		done = r.failTruncated(calls)
	case r.sequential(calls):
		done = r.runSequential(a, calls)
	default:
		done = r.runParallel(a, calls, prepared)
	}
	terminate := len(done) > 0
	for _, c := range done {
		terminate = terminate && c.result.Terminate
	}
	return results[:len(done)], terminate && a.StopReason != providers.StopReasonLength
}

// lists returns room for n call pointers and, after them, an empty list
// with room for n more (the prepared calls), in r.scratch, reused from
// batch to batch: a batch is over, its bodies returned or abandoned,
// before the next begins, and nothing keeps these lists.
func (r *run) lists(n int) (calls, prepared []*call) {
	if cap(r.scratch) < 2*n {
		r.scratch = make([]*call, 2*n)
	}
	clear(r.scratch)
	r.scratch = r.scratch[:2*n]
	return r.scratch[:n:n], r.scratch[n : n : 2*n]
}

// markRefusals refuses the calls a message may not make: those past
// MaxToolCalls, and a call whose id an earlier call of the message has.
func (r *run) markRefusals(calls []*call) {
	max := limit(r.cfg.Limits.MaxToolCalls, DefaultMaxToolCalls)
	var seen map[string]bool // only for long messages; short ones compare pairs
	if len(calls) > 16 {
		seen = make(map[string]bool, len(calls))
	}
	for i, c := range calls {
		if i >= max {
			c.refusal = tooManyCallsText(c.tc.Name, len(calls), max)
			continue
		}
		dup := false
		if seen != nil {
			dup = seen[c.tc.ID]
			seen[c.tc.ID] = true
		} else {
			for _, o := range calls[:i] {
				dup = dup || o.tc.ID == c.tc.ID
			}
		}
		if dup {
			c.refusal = duplicateIDText(c.tc.Name, c.tc.ID)
		}
	}
}

// sequential reports whether the batch must run one call at a time.
func (r *run) sequential(calls []*call) bool {
	if r.cfg.ToolExecution == tools.Sequential {
		return true
	}
	for _, c := range calls {
		if t := r.byName[c.tc.Name]; t != nil && t.Mode() == tools.Sequential {
			return true
		}
	}
	return false
}

// failTruncated refuses every call of a response that hit the token limit:
// its arguments may have been salvaged from a cut-off stream.
func (r *run) failTruncated(calls []*call) []*call {
	for _, c := range calls {
		r.emitStart(c)
		c.fail(events.OutcomeTruncated, truncatedText(c.tc.Name))
		r.emitEnd(c)
		r.emitResult(c, r.now())
	}
	return calls
}

// runSequential prepares, runs and finishes one call before the next, and
// stops after a call that finds the run cancelled.
func (r *run) runSequential(a providers.AssistantMessage, calls []*call) []*call {
	for i, c := range calls {
		r.emitStart(c)
		if r.prepare(a, c) == nil {
			r.execute(a, c)
		}
		r.emitEnd(c)
		r.emitResult(c, r.now())
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
		if r.prepare(a, c) != nil {
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
	now := r.now() // the results are made together
	for _, c := range calls[:seen] {
		r.emitResult(c, now)
	}
	return calls[:seen]
}

// finish runs a prepared call's body and publishes its end.
func (r *run) finish(a providers.AssistantMessage, c *call) {
	r.execute(a, c)
	r.emitEnd(c)
}

func (r *run) emitStart(c *call) {
	r.emitOpening(&c.stream, events.ToolExecutionStart{ToolCallID: c.tc.ID, ToolName: c.tc.Name, Args: c.tc.Arguments})
}

func (r *run) emitEnd(c *call) {
	how := c.outcome
	if how == "" {
		how = events.OutcomeOK
		if c.isError {
			how = events.OutcomeFailed
		}
	}
	r.emit(events.ToolExecutionEnd{ToolCallID: c.tc.ID, ToolName: c.tc.Name, Result: c.result, IsError: c.isError, Outcome: how})
}

// emitResult builds the call's result message, stamped now, publishes it
// and appends it to the transcript.
func (r *run) emitResult(c *call, now int64) {
	content := c.result.Content
	if content == nil {
		content = []providers.Content{}
	}
	*c.msg = providers.ToolResultMessage{ToolCallID: c.tc.ID, ToolName: c.tc.Name, Content: content,
		Details: c.result.Details, Usage: c.result.Usage, IsError: c.isError, Timestamp: now}
	var boxed providers.Message = *c.msg
	r.emit(events.MessageStart{Message: boxed})
	r.emit(events.MessageEnd{Message: boxed})
	r.append(boxed)
}
