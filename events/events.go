// Package events defines the events a run publishes, with the reference's
// JSON names, and the [Bus] that delivers them to subscribers in one total
// order. A [Handler] sees each event as it happens:
//
//	func(ctx context.Context, e events.Event) {
//		switch e := e.(type) {
//		case events.MessageUpdate:
//			if e.Stream.Type == providers.StreamTextDelta { // not tool-argument or thinking deltas
//				fmt.Print(e.Stream.Delta)
//			}
//		case events.ToolExecutionEnd:
//			fmt.Printf("\n%s done (error: %v)\n", e.ToolName, e.IsError)
//		}
//	}
//
// A run publishes, in order: agent_start; for each turn turn_start, the
// message_start/message_update/message_end events of the messages it adds,
// the tool_execution_start/update/end events of its tool calls, and
// turn_end; and finally agent_end with every message the run produced.
// Package term prints them; sse serves them to browsers; natsbus carries
// them over NATS.
//
// Each event carries an [Envelope]: its position in the run (numbered so
// that a subscriber sees a gap, see [Seq] and [SeqCheck]), the path of
// tool calls that led to it when a run is nested in another's call
// ([Nest]), and the model attempt a streamed update belongs to.
//
// Events are immutable values. A subscriber may keep one for as long as it
// likes: nothing the run does later changes it. Messages, arguments and
// results inside an event are shared with the transcript, so subscribers
// must treat them as read-only.
//
// [Marshal] and [Unmarshal] encode events as the reference does. On a wire
// (SSE, NATS) [MarshalWire] writes a versioned form in which a
// message_update carries only its change, and an [Assembler] puts the
// message back together, so a streamed answer costs bytes in proportion
// to its length (a 100 KB answer in 4-character pieces: 4.3 MB of SSE,
// where the whole message per update came to 2.5 GB).
package events

import (
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/tools"
)

// Type is an event's JSON type name.
type Type string

// The event types, with the reference's names.
const (
	TypeAgentStart          Type = "agent_start"
	TypeAgentEnd            Type = "agent_end"
	TypeTurnStart           Type = "turn_start"
	TypeTurnEnd             Type = "turn_end"
	TypeMessageStart        Type = "message_start"
	TypeMessageUpdate       Type = "message_update"
	TypeMessageEnd          Type = "message_end"
	TypeToolExecutionStart  Type = "tool_execution_start"
	TypeToolExecutionUpdate Type = "tool_execution_update"
	TypeToolExecutionEnd    Type = "tool_execution_end"
	// TypeToolsChanged and TypeCompacted are ours, not the reference's.
	TypeToolsChanged Type = "tools_changed"
	TypeCompacted    Type = "compacted"
)

// Event is one step of a run. The set of event types is closed: a type
// switch over the twelve types of this package is exhaustive.
//
// Every event embeds an [Envelope]: its position in the run, the path of
// tool calls that led to it, its model attempt.
type Event interface {
	Type() Type
	envelope() Envelope
	isEvent()
}

// AgentStart is the first event of a run.
type AgentStart struct{ Envelope }

// AgentEnd is the last event of a run. Messages holds every message the run
// produced (its prompts included), in transcript order.
type AgentEnd struct {
	Envelope

	Messages []providers.Message
}

// TurnStart opens a turn: one assistant response and its tool calls.
type TurnStart struct{ Envelope }

// TurnEnd closes a turn with its assistant message and the results of its
// tool calls, in call order.
type TurnEnd struct {
	Envelope

	Message     providers.AssistantMessage
	ToolResults []providers.ToolResultMessage
}

// MessageStart announces a message: a prompt, a steering or follow-up
// message, the assistant's response (partial, as it starts streaming) or a
// tool result.
type MessageStart struct {
	Envelope

	Message providers.Message
}

// MessageUpdate carries one streamed step of the assistant's response.
type MessageUpdate struct {
	Envelope

	// Stream is the provider's event; Stream.Partial() is the message so
	// far, put together when asked for (the event itself holds only a
	// reference, so a handler that never asks pays nothing).
	Stream providers.StreamEvent
}

// MessageEnd closes a message; Message is its final form.
type MessageEnd struct {
	Envelope

	Message providers.Message
}

// ToolExecutionStart says the loop has begun handling a tool call, before
// any check: a call that then fails a check still gets its end event.
type ToolExecutionStart struct {
	Envelope

	ToolCallID string
	ToolName   string
	// Args are the arguments exactly as the model sent them.
	Args map[string]any
}

// ToolExecutionUpdate carries a partial result a running tool published.
type ToolExecutionUpdate struct {
	Envelope

	ToolCallID string
	ToolName   string
	Args       map[string]any
	Partial    tools.Result
}

// ToolExecutionEnd says a tool call is finished. It goes out the moment the
// call finishes, so in parallel mode end events follow completion order.
type ToolExecutionEnd struct {
	Envelope

	ToolCallID string
	ToolName   string
	Result     tools.Result
	IsError    bool
	// Outcome says how the call ended (ours, not the reference's): for a
	// tracer, a metric or a log that must tell a refusal from a failure.
	Outcome Outcome
}

// Outcome is how a tool call ended.
type Outcome string

// The outcomes of a tool call.
const (
	OutcomeOK             Outcome = "ok"
	OutcomeFailed         Outcome = "failed"            // the body returned an error, or panicked
	OutcomeTimeout        Outcome = "timeout"           // the body passed its timeout
	OutcomeTruncated      Outcome = "truncated"         // the response was cut at the token limit, or the arguments were cut off
	OutcomeUnknownTool    Outcome = "unknown_tool"      // no tool of that name
	OutcomeInvalid        Outcome = "invalid_arguments" // arguments that do not fit the schema (or too large, or not an object)
	OutcomeBlocked        Outcome = "blocked"           // the policy hook refused it
	OutcomeAborted        Outcome = "aborted"           // the run was cancelled before the call ran, or while it ran and the body gave up
	OutcomeRefused        Outcome = "refused"           // the message may not make it (a repeated id, past MaxToolCalls)
	OutcomeResultTooLarge Outcome = "result_too_large"  // the result passed MaxResultBytes
)

// ToolsChanged says the run's tool set changed between two turns: a tool
// source (an MCP server, say) added or removed tools. Tools lists the
// names the next model call offers; Added and Removed the change.
//
// Hidden names the tools of a source left out because a tool before it
// (the conversation's, or an earlier source's) has the same name. The
// event comes before the run's first model call too when a source's tool
// is hidden then, and whenever the hidden names change.
type ToolsChanged struct {
	Envelope

	Tools   []string
	Added   []string
	Removed []string
	Hidden  []string
}

// Type reports the event's JSON type name.
func (ToolsChanged) Type() Type { return TypeToolsChanged }

// Compacted says what was left out of, shortened in or summarised for the
// next request because the conversation outgrew the model's context window
// (loop.Config.Compactor). The transcript itself keeps everything.
type Compacted struct {
	Envelope

	Strategy string // "trim", "summarize", "shorten-results", or a custom one's name
	// Before and After are the request's estimated tokens.
	Before, After int
	// Dropped messages are left out; Shortened results cut down;
	// Summarized messages replaced by a summary.
	Dropped, Shortened, Summarized int
	// Note says what happened, in words (a summary that failed, say).
	Note string
}

// Type reports the event's JSON type name.
func (Compacted) Type() Type { return TypeCompacted }

// Type reports the event's JSON type name.
func (AgentStart) Type() Type { return TypeAgentStart }

// Type reports the event's JSON type name.
func (AgentEnd) Type() Type { return TypeAgentEnd }

// Type reports the event's JSON type name.
func (TurnStart) Type() Type { return TypeTurnStart }

// Type reports the event's JSON type name.
func (TurnEnd) Type() Type { return TypeTurnEnd }

// Type reports the event's JSON type name.
func (MessageStart) Type() Type { return TypeMessageStart }

// Type reports the event's JSON type name.
func (MessageUpdate) Type() Type { return TypeMessageUpdate }

// Type reports the event's JSON type name.
func (MessageEnd) Type() Type { return TypeMessageEnd }

// Type reports the event's JSON type name.
func (ToolExecutionStart) Type() Type { return TypeToolExecutionStart }

// Type reports the event's JSON type name.
func (ToolExecutionUpdate) Type() Type { return TypeToolExecutionUpdate }

// Type reports the event's JSON type name.
func (ToolExecutionEnd) Type() Type { return TypeToolExecutionEnd }

func (AgentStart) isEvent()          {}
func (AgentEnd) isEvent()            {}
func (TurnStart) isEvent()           {}
func (TurnEnd) isEvent()             {}
func (MessageStart) isEvent()        {}
func (MessageUpdate) isEvent()       {}
func (MessageEnd) isEvent()          {}
func (ToolExecutionStart) isEvent()  {}
func (ToolExecutionUpdate) isEvent() {}
func (ToolExecutionEnd) isEvent()    {}
func (ToolsChanged) isEvent()        {}
func (Compacted) isEvent()           {}
