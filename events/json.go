package events

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/tools"
)

// wire is the JSON form of every event: the reference's field names, with
// each event using the fields it has.
type wire struct {
	Type                  Type                          `json:"type"`
	V                     int                           `json:"v,omitempty"`       // the wire version (MarshalWire)
	Seq                   uint64                        `json:"seq,omitempty"`     // v2: Envelope.Seq.N
	Sub                   uint64                        `json:"sub,omitempty"`     // v2: Envelope.Seq.Sub
	Attempt               int                           `json:"attempt,omitempty"` // v2: Envelope.Attempt
	Path                  []string                      `json:"path,omitempty"`    // v2: Envelope.Path
	Messages              []json.RawMessage             `json:"messages,omitempty"`
	Message               json.RawMessage               `json:"message,omitempty"`
	ToolResults           []providers.ToolResultMessage `json:"toolResults,omitempty"`
	AssistantMessageEvent *providers.StreamEvent        `json:"assistantMessageEvent,omitempty"`
	ToolCallID            string                        `json:"toolCallId,omitempty"`
	ToolName              string                        `json:"toolName,omitempty"`
	Args                  map[string]any                `json:"args,omitempty"`
	PartialResult         *tools.Result                 `json:"partialResult,omitempty"`
	Result                *tools.Result                 `json:"result,omitempty"`
	IsError               *bool                         `json:"isError,omitempty"`
	Outcome               Outcome                       `json:"outcome,omitempty"`
	Tools                 []string                      `json:"tools,omitempty"`
	Added                 []string                      `json:"added,omitempty"`
	Removed               []string                      `json:"removed,omitempty"`
	Hidden                []string                      `json:"hidden,omitzero"` // [] says none is hidden any more
	Compacted             *compactedJSON                `json:"compacted,omitempty"`
}

type compactedJSON struct {
	Strategy   string `json:"strategy"`
	Before     int    `json:"before"`
	After      int    `json:"after"`
	Dropped    int    `json:"dropped"`
	Shortened  int    `json:"shortened"`
	Summarized int    `json:"summarized"`
	Note       string `json:"note,omitempty"`
}

// Marshal encodes an event as JSON with the reference's type name and
// field names.
func Marshal(e Event) ([]byte, error) { return marshal(e, 0) }

// marshal encodes e with the version field v (0 leaves it out).
func marshal(e Event, v int) ([]byte, error) {
	w := wire{Type: e.Type(), V: v}
	if v >= 2 {
		w.setEnvelope(e.envelope())
	}
	var err error
	switch e := e.(type) {
	case AgentEnd:
		w.Messages = make([]json.RawMessage, len(e.Messages))
		for i, m := range e.Messages {
			if w.Messages[i], err = json.Marshal(m); err != nil {
				return nil, err
			}
		}
	case TurnEnd:
		if w.Message, err = json.Marshal(e.Message); err != nil {
			return nil, err
		}
		w.ToolResults = e.ToolResults
		if w.ToolResults == nil {
			w.ToolResults = []providers.ToolResultMessage{}
		}
	case MessageStart:
		w.Message, err = json.Marshal(e.Message)
	case MessageEnd:
		w.Message, err = json.Marshal(e.Message)
	case MessageUpdate:
		if m := e.Stream.Partial(); m != nil {
			w.Message, err = json.Marshal(m)
		}
		w.AssistantMessageEvent = &e.Stream
	case ToolExecutionStart:
		w.ToolCallID, w.ToolName, w.Args = e.ToolCallID, e.ToolName, nonNil(e.Args)
	case ToolExecutionUpdate:
		w.ToolCallID, w.ToolName, w.Args, w.PartialResult = e.ToolCallID, e.ToolName, nonNil(e.Args), &e.Partial
	case ToolExecutionEnd:
		w.ToolCallID, w.ToolName, w.Result, w.IsError, w.Outcome = e.ToolCallID, e.ToolName, &e.Result, &e.IsError, e.Outcome
	case ToolsChanged:
		w.Tools, w.Added, w.Removed, w.Hidden = nonNilNames(e.Tools), e.Added, e.Removed, e.Hidden
	case Compacted:
		w.Compacted = &compactedJSON{e.Strategy, e.Before, e.After, e.Dropped, e.Shortened, e.Summarized, e.Note}
	}
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, err
	}
	if _, ok := e.(AgentEnd); ok && len(w.Messages) == 0 {
		// omitempty drops an empty list; agent_end always has one.
		return append(b[:len(b)-1], []byte(`,"messages":[]}`)...), nil
	}
	return b, nil
}

// ErrUnknown is wrapped by Unmarshal's error for an event of a type or a
// wire version this package does not know: one a newer publisher wrote,
// which a consumer may skip, unlike malformed input.
var ErrUnknown = errors.New("event unknown to this version")

// WireVersion is the version of the wire form MarshalWire writes.
// Unmarshal reads this version, version 1 and the reference's JSON (no
// version).
const WireVersion = 2

func (w *wire) setEnvelope(env Envelope) {
	w.Seq, w.Sub, w.Attempt, w.Path = env.Seq.N, env.Seq.Sub, env.Attempt, env.Path
}

func (w *wire) envelope() Envelope {
	env := Envelope{Seq: Seq{N: w.Seq, Sub: w.Sub}, Attempt: w.Attempt, Path: w.Path}
	if len(env.Path) == 0 {
		env.Path = nil // "path": [] is the top level, as no path is
	}
	return env
}

// MarshalWire encodes an event for the wire (Server-Sent Events, NATS):
// what Marshal writes, with "v": WireVersion and the event's Envelope,
// except that a message_update carries only the change, not the message
// so far, so that a streamed answer costs bytes in proportion to its
// length, not its square.
//
// The wire form, version 2, one JSON object per event. Every event has
//
//	"type"      the event's type (below)
//	"v"         2
//	"seq"       Envelope.Seq.N: the run's own number of the event, or of
//	            the own event that opened the stream it belongs to
//	"sub"?      Envelope.Seq.Sub: the event's number within that stream
//	            (message_update, tool_execution_update); absent for own events
//	"attempt"?  Envelope.Attempt: the model attempt of a message_update;
//	            absent for the first (0)
//	"path"?     Envelope.Path: the call ids from the top-level run down to
//	            the run that published the event; absent at the top level
//
// (each absent when zero; see Seq for the numbering and the gap rule), and
// the fields of its type:
//
//	agent_start, turn_start      nothing more
//	message_start, message_end   "message"               the whole message
//	message_update               "assistantMessageEvent": {
//	                                "type": "text_delta" | "thinking_delta" | "toolcall_delta" | ...,
//	                                "contentIndex", "delta"?, "content"? (on *_end),
//	                                "toolCall"? (on toolcall_start: id and name; on toolcall_end: the call),
//	                                "partial"? (on start: a new attempt's message, no blocks yet)}
//	tool_execution_start         "toolCallId", "toolName", "args"
//	tool_execution_update        "toolCallId", "toolName", "args", "partialResult"
//	tool_execution_end           "toolCallId", "toolName", "result", "isError", "outcome" (ours)
//	tools_changed                "tools", "added"?, "removed"?  (ours: a tool source changed)
//	compacted                    "compacted": {"strategy", "before", "after", "dropped", "shortened", "summarized", "note"?}  (ours)
//	turn_end                     "message", "toolResults"
//	agent_end                    "messages"
//
// Version 1 is the same without "seq", "sub", "attempt" and "path"; a
// version 1 event decodes with the zero Envelope. A new event type is added
// under a new version; a decoder refuses versions it does not know.
//
// A consumer rebuilds the message in flight from its message_start and
// the deltas that follow (Unmarshal gives a MessageUpdate whose
// Partial is nil; an Assembler does the rebuilding); message_end
// carries the final message whole. A message_update of type "start" with
// an "attempt" greater than the one before starts the message over: what
// the earlier attempt streamed is dropped (Envelope.Attempt).
func MarshalWire(e Event) ([]byte, error) {
	if u, ok := e.(MessageUpdate); ok {
		in := u.Stream
		ev := providers.StreamEvent{Type: in.Type, ContentIndex: in.ContentIndex, Delta: in.Delta, Content: in.Content,
			ToolCall: in.ToolCall, Reason: in.Reason}
		if ev.Type == providers.StreamStart {
			ev.Message = in.Partial() // a new attempt's start: no blocks yet
		}
		if ev.Type == providers.StreamToolCallStart && ev.ToolCall == nil {
			if m := in.Partial(); m != nil && ev.ContentIndex < len(m.Content) {
				if tc, ok := m.Content[ev.ContentIndex].(providers.ToolCall); ok {
					ev.ToolCall = &providers.ToolCall{ID: tc.ID, Name: tc.Name, Arguments: map[string]any{}}
				}
			}
		}
		w := wire{Type: TypeMessageUpdate, V: WireVersion, AssistantMessageEvent: &ev}
		w.setEnvelope(u.Envelope)
		return json.Marshal(w)
	}
	return marshal(e, WireVersion)
}

func nonNilNames(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNil(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// Unmarshal decodes an event encoded by [Marshal] (or by the reference)
// or by [MarshalWire], version 1 or 2; the event's Envelope is the one
// the wire form carries (zero for the reference's JSON and version 1).
// Unknown types, unknown versions and malformed input are errors.
func Unmarshal(data []byte) (Event, error) {
	e, env, err := unmarshal(data)
	if err != nil {
		return nil, err
	}
	if env.Seq != (Seq{}) || env.Attempt != 0 || len(env.Path) > 0 {
		e = WithEnvelope(e, env)
	}
	return e, nil
}

func unmarshal(data []byte) (Event, Envelope, error) {
	var w wire
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, Envelope{}, fmt.Errorf("event: %w", err)
	}
	if w.V < 0 || w.V > WireVersion {
		return nil, Envelope{}, fmt.Errorf("event: wire version %d is not one this decoder reads (1 to %d): %w", w.V, WireVersion, ErrUnknown)
	}
	if w.V < 2 && (w.Seq != 0 || w.Sub != 0 || w.Attempt != 0 || len(w.Path) > 0) {
		return nil, Envelope{}, fmt.Errorf("event: an envelope (seq, sub, attempt, path) in wire version %d, which has none", w.V)
	}
	if w.Attempt < 0 {
		return nil, Envelope{}, fmt.Errorf("event: negative attempt %d", w.Attempt)
	}
	e, err := decode(&w)
	return e, w.envelope(), err
}

// decode makes the event w describes.
func decode(w *wire) (Event, error) {
	msg := func() (providers.Message, error) {
		if len(w.Message) == 0 {
			return nil, fmt.Errorf("event %s: missing message", w.Type)
		}
		return providers.UnmarshalMessage(w.Message)
	}
	switch w.Type {
	case TypeAgentStart:
		return AgentStart{}, nil
	case TypeTurnStart:
		return TurnStart{}, nil
	case TypeAgentEnd:
		e := AgentEnd{Messages: make([]providers.Message, 0, len(w.Messages))}
		for _, raw := range w.Messages {
			m, err := providers.UnmarshalMessage(raw)
			if err != nil {
				return nil, fmt.Errorf("event agent_end: %w", err)
			}
			e.Messages = append(e.Messages, m)
		}
		return e, nil
	case TypeTurnEnd:
		var a providers.AssistantMessage
		if err := a.UnmarshalJSON(w.Message); err != nil {
			return nil, fmt.Errorf("event turn_end: %w", err)
		}
		return TurnEnd{Message: a, ToolResults: w.ToolResults}, nil
	case TypeMessageStart, TypeMessageEnd:
		m, err := msg()
		if err != nil {
			return nil, err
		}
		if w.Type == TypeMessageStart {
			return MessageStart{Message: m}, nil
		}
		return MessageEnd{Message: m}, nil
	case TypeMessageUpdate:
		if w.AssistantMessageEvent == nil {
			return nil, fmt.Errorf("event message_update: missing assistantMessageEvent")
		}
		ev := *w.AssistantMessageEvent
		if ev.Message == nil && len(w.Message) > 0 {
			var a providers.AssistantMessage
			if err := a.UnmarshalJSON(w.Message); err != nil {
				return nil, fmt.Errorf("event message_update: %w", err)
			}
			ev.Message = &a
		}
		return MessageUpdate{Stream: ev}, nil
	case TypeToolExecutionStart:
		return ToolExecutionStart{ToolCallID: w.ToolCallID, ToolName: w.ToolName, Args: w.Args}, nil
	case TypeToolExecutionUpdate:
		e := ToolExecutionUpdate{ToolCallID: w.ToolCallID, ToolName: w.ToolName, Args: w.Args}
		if w.PartialResult != nil {
			e.Partial = *w.PartialResult
		}
		return e, nil
	case TypeToolExecutionEnd:
		e := ToolExecutionEnd{ToolCallID: w.ToolCallID, ToolName: w.ToolName, Outcome: w.Outcome}
		if w.Result != nil {
			e.Result = *w.Result
		}
		if w.IsError != nil {
			e.IsError = *w.IsError
		}
		return e, nil
	case TypeToolsChanged:
		return ToolsChanged{Tools: w.Tools, Added: w.Added, Removed: w.Removed, Hidden: w.Hidden}, nil
	case TypeCompacted:
		if w.Compacted == nil {
			return nil, fmt.Errorf("event compacted: missing compacted")
		}
		c := w.Compacted
		return Compacted{Strategy: c.Strategy, Before: c.Before, After: c.After, Dropped: c.Dropped, Shortened: c.Shortened, Summarized: c.Summarized, Note: c.Note}, nil
	}
	return nil, fmt.Errorf("event: unknown type %q: %w", w.Type, ErrUnknown)
}
