package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/internal/quote"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/tools"
)

// The texts the model reads when the loop refuses a call, as the reference
// writes them. The others name the tool and say why; see the README's
// preflight table.
const (
	// BlockedText is the result of a call the policy hook blocked without
	// a reason of its own.
	BlockedText = "Tool execution was blocked"
	// AbortedText is the result of a call the run was cancelled before.
	AbortedText = "Operation aborted"
)

func notFoundText(name string) string { return "Tool " + name + " not found" }

func truncatedText(name string) string {
	return fmt.Sprintf("Tool call %q was not executed: the response hit the output token limit, "+
		"so its arguments may be truncated. Re-issue the tool call with complete arguments.", name)
}

func oversizedArgsText(name string, n, max int) string {
	return fmt.Sprintf("Tool call %q was not executed: its arguments are %d bytes, more than the limit of %d bytes.", name, n, max)
}

func oversizedResultText(name string, n, max int) string {
	return fmt.Sprintf("Tool %s returned %d bytes of content, more than the limit of %d bytes that can be sent back. "+
		"Ask for less (a narrower query, a range, a summary).", name, n, max)
}

func duplicateIDText(name, id string) string {
	return fmt.Sprintf("Tool call %q was not executed: its id %q is the id of an earlier call in this message. "+
		"Give every tool call an id of its own.", name, id)
}

func tooManyCallsText(name string, n, max int) string {
	return fmt.Sprintf("Tool call %q was not executed: the message has %d tool calls, more than the limit of %d per message. "+
		"Make fewer calls at once.", name, n, max)
}

// notObject is the refusal of arguments that arrived whole but are not a
// JSON object, in the validator's words.
func notObject(name, raw string) string {
	var v any
	_ = json.Unmarshal([]byte(raw), &v)
	e := &tools.ValidationError{Tool: name, Received: v, Violations: []tools.Violation{{Path: "root", Message: "must be object"}}}
	return e.Error()
}

func incompleteText(name string) string {
	return fmt.Sprintf("Tool call %q was not executed: its arguments were not complete JSON, "+
		"so they may be truncated. Re-issue the tool call with complete arguments.", name)
}

func timeoutText(name string, d time.Duration) string {
	return fmt.Sprintf("Tool %s timed out after %v", name, d)
}

// call is one tool call on its way through the batch.
type call struct {
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

// prepare runs the preflight on a call: nil when the call is prepared,
// or c itself holding the error result that stands instead, its text held
// to MaxResultBytes.
func (r *run) prepare(a providers.AssistantMessage, c *call) (refused *call) {
	if refused = r.preflight(a, c); refused != nil {
		r.capRefusal(c)
	}
	return refused
}

// capRefusal cuts a refusal's text that passes MaxResultBytes to an excerpt
// of that size, its head and its tail around a note of the bytes left out
// (agent.ExcerptMarker): a validation listing quotes the arguments
// received, indented, and arguments within MaxArgumentBytes, nested deep,
// can make it a hundred times their size.
func (r *run) capRefusal(c *call) {
	max := limit(r.cfg.Limits.MaxResultBytes, DefaultMaxResultBytes)
	if len(c.result.Content) == 1 {
		if t, ok := c.result.Content[0].(providers.Text); ok && len(t.Text) > max {
			c.result.Content = []providers.Content{providers.Text{Text: quote.Excerpt(t.Text, max)}}
		}
	}
}

// preflight answers the questions a call must pass before its body may run,
// in order. It returns nil when the call is prepared (c.tool and c.inv are
// set), or c itself holding the error result that stands instead.
func (r *run) preflight(a providers.AssistantMessage, c *call) (refused *call) {
	// May the message make this call (an id of its own, within MaxToolCalls)?
	if c.refusal != "" {
		return c.fail(events.OutcomeRefused, c.refusal)
	}
	// Does the tool exist?
	c.tool = r.byName[c.tc.Name]
	if c.tool == nil {
		return c.fail(events.OutcomeUnknownTool, notFoundText(c.tc.Name))
	}
	// Did the arguments arrive whole, within bounds, as an object?
	if n, max := argumentBytes(c.tc), r.cfg.RequestOptions.ArgumentLimit(); max >= 0 && n > max {
		return c.fail(events.OutcomeInvalid, oversizedArgsText(c.tc.Name, n, max))
	}
	if raw := strings.TrimSpace(c.tc.RawArguments); raw != "" && raw[0] != '{' && json.Valid([]byte(raw)) {
		return c.fail(events.OutcomeInvalid, notObject(c.tc.Name, raw))
	}
	if c.tc.Incomplete {
		return c.fail(events.OutcomeTruncated, incompleteText(c.tc.Name))
	}
	// Do they fit the schema (after the tool's shim and coercion)?
	inv, err := c.tool.Check(c.tc.Arguments)
	if err != nil {
		return c.fail(events.OutcomeInvalid, err.Error())
	}
	// Does policy allow the call? Each hook sees the previous one's
	// arguments; the first "no" wins.
	for _, hook := range r.h.before {
		decision, err := r.before(hook, a, c, inv)
		switch {
		case err != nil: // as in the reference, a failing hook's message wins
			if r.ctx.Err() != nil { // though it failed because the run was cancelled
				return c.fail(events.OutcomeAborted, err.Error())
			}
			return c.fail(events.OutcomeBlocked, err.Error())
		case r.ctx.Err() != nil: // and an abort wins over a decision
			return c.fail(events.OutcomeAborted, AbortedText)
		case decision.Block:
			reason := decision.Reason
			if reason == "" {
				reason = BlockedText
			}
			c.fail(events.OutcomeBlocked, reason)
			c.result.Terminate = decision.Terminate
			return c
		case decision.Args != nil:
			if inv, err = c.tool.Check(decision.Args); err != nil {
				return c.fail(events.OutcomeInvalid, err.Error())
			}
		}
	}
	// Is the run still wanted?
	if r.ctx.Err() != nil {
		return c.fail(events.OutcomeAborted, AbortedText)
	}
	c.inv = inv
	return nil
}

// argumentBytes is the size of a call's argument text: as streamed, or
// for a call that came with parsed arguments only (a provider that does
// not stream them as text, a transcript built by hand), about the size of
// their JSON, so that no call escapes MaxArgumentBytes.
func argumentBytes(tc providers.ToolCall) int {
	if n := max(len(tc.RawArguments), tc.ArgumentBytes); n > 0 || len(tc.Arguments) == 0 {
		return n
	}
	return jsonSize(tc.Arguments, int(^uint(0)>>1))
}

// before calls one policy hook with a copy of the arguments; a panic is an
// error.
func (r *run) before(hook func(context.Context, BeforeCall) (BeforeResult, error), a providers.AssistantMessage, c *call, inv *tools.Invocation) (res BeforeResult, err error) {
	defer r.recoverHook("BeforeToolCall", &err)
	return hook(r.ctx, BeforeCall{Assistant: a, Call: c.tc, Args: inv.Args(), Conversation: r.c})
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
			slab = append(slab, call{tc: tc, msg: &results[i]})
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
		r.emitResult(c, providers.Now())
	}
	return calls
}

func (r *run) emitStart(c *call) {
	r.emit(events.ToolExecutionStart{ToolCallID: c.tc.ID, ToolName: c.tc.Name, Args: c.tc.Arguments})
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
