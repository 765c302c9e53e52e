package loop

// The preflight: the questions a call must pass before its body may run,
// and the texts the model reads when it does not.

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
