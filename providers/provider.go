package providers

import (
	"context"
	"encoding/json"
	"iter"
	"time"
)

// Provider streams model responses. Implementations must be safe for
// concurrent use by several runs.
type Provider interface {
	// Stream sends req to the model and returns the response as a sequence
	// of events: StreamStart first, then block events, and last exactly one
	// StreamDone or StreamError carrying the final message. Failures after
	// the request was accepted (HTTP errors, broken streams, cancellation)
	// are reported inside the sequence as StreamError with stop reason error
	// or aborted, never as a Go error; the error result is for requests that
	// cannot be made at all (a misconfigured provider).
	//
	// The sequence is consumed once, on the caller's goroutine. When ctx is
	// cancelled the sequence must end promptly with stop reason aborted.
	//
	// req belongs to the caller. It stays valid and unchanged until the
	// sequence has finished (or Stream has returned an error); after that
	// the caller may reuse it for its next request, as the loop does. A
	// provider that keeps a request longer, to record it say, keeps a copy
	// (the Request value; the messages it points to are immutable).
	Stream(ctx context.Context, req *Request) (iter.Seq[StreamEvent], error)
}

// AbortedMessage is the error message of a response cut short because the
// run was cancelled, as the reference writes it (the model may read it in a
// later request).
const AbortedMessage = "Request was aborted"

// Request is what a provider sends to the model for one response.
type Request struct {
	Model        Model
	SystemPrompt string
	Messages     []Message
	Tools        []ToolSpec
	Options      RequestOptions
	// APIKey, when not empty, is the key for this call only (a key that
	// expires or rotates), in place of the provider's own. The loop sets
	// it from its GetAPIKey hooks (loop.Hooks); a program that calls
	// Stream itself may set it.
	//
	// This is the one rule for API keys. A call's key is, in order:
	// Request.APIKey when not empty; else the Options.APIKey the provider
	// was made with; else its environment variable, read once when the
	// provider is made (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY
	// then GOOGLE_API_KEY; providers/auto picks a provider by the same
	// variables). So a fixed key belongs to the provider, and a changing
	// one to a GetAPIKey hook. No provider puts a key in an error, an
	// event or a log line.
	APIKey string
	// Output, when not nil, asks for the answer as JSON fitting a schema,
	// from a provider that offers it (StructuredOutput); others ignore it.
	Output *OutputFormat
	// Time, when not zero, is when the request was made by the caller's
	// clock (loop.Runtime.Now): the response's messages are stamped with
	// it instead of the wall clock, so a caller that owns time (a workflow
	// engine) gets the same messages when it replays. The zero value reads
	// the wall clock (Now) when the response starts.
	Time time.Time
}

// OutputFormat is a schema the model's answer is to fit (structured
// output): Chat Completions' response_format json_schema, the Responses
// API's text.format, Gemini's responseJsonSchema.
type OutputFormat struct {
	Name   string          // letters, digits, '_' and '-'
	Schema json.RawMessage // a JSON Schema whose root is an object
	// Strict asks the server to guarantee the schema, where it can: the
	// schema must then list every property as required and forbid others
	// at every level (OpenAI's rule); see StrictSchema.
	Strict bool
}

// StructuredOutput is implemented by providers that honour
// Request.Output natively.
type StructuredOutput interface {
	StructuredOutput() bool
}

// StrictSchema reports whether a schema meets OpenAI's strict rule: every
// object lists all its properties as required and forbids others.
func StrictSchema(schema json.RawMessage) bool {
	var v any
	if json.Unmarshal(schema, &v) != nil {
		return false
	}
	return strictNode(v)
}

func strictNode(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		if props, ok := v["properties"].(map[string]any); ok {
			if v["additionalProperties"] != false {
				return false
			}
			req, _ := v["required"].([]any)
			if len(req) != len(props) {
				return false
			}
		}
		for _, e := range v {
			if !strictNode(e) {
				return false
			}
		}
	case []any:
		for _, e := range v {
			if !strictNode(e) {
				return false
			}
		}
	}
	return true
}

// ToolSpec is how a provider describes a tool to the model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// RequestOptions are per-request settings. The zero value asks for the
// provider's defaults.
type RequestOptions struct {
	// MaxTokens bounds the response's length; 0 leaves it to the server.
	MaxTokens int
	// Temperature, when not nil, is the sampling temperature.
	Temperature *float64
	// Reasoning is the reasoning effort ("minimal" ... "high") for models
	// that reason; empty for the server's default.
	Reasoning string
	// MaxArgumentBytes caps the argument text of one streamed tool call. A
	// provider stops keeping a call's text past it (its memory stays
	// bounded), and the loop refuses the call with a message saying so. 0
	// means DefaultMaxArgumentBytes, negative means no cap.
	MaxArgumentBytes int
}

// DefaultMaxArgumentBytes is the default of RequestOptions.MaxArgumentBytes.
const DefaultMaxArgumentBytes = 1 << 20

// ArgumentLimit resolves MaxArgumentBytes: the cap in bytes, or -1 for
// none.
func (o RequestOptions) ArgumentLimit() int {
	switch {
	case o.MaxArgumentBytes == 0:
		return DefaultMaxArgumentBytes
	case o.MaxArgumentBytes < 0:
		return -1
	}
	return o.MaxArgumentBytes
}

// StreamEventType names a stream event.
type StreamEventType string

// The stream event types, with the reference's names.
const (
	StreamStart         StreamEventType = "start"
	StreamTextStart     StreamEventType = "text_start"
	StreamTextDelta     StreamEventType = "text_delta"
	StreamTextEnd       StreamEventType = "text_end"
	StreamThinkingStart StreamEventType = "thinking_start"
	StreamThinkingDelta StreamEventType = "thinking_delta"
	StreamThinkingEnd   StreamEventType = "thinking_end"
	StreamToolCallStart StreamEventType = "toolcall_start"
	StreamToolCallDelta StreamEventType = "toolcall_delta"
	StreamToolCallEnd   StreamEventType = "toolcall_end"
	StreamDone          StreamEventType = "done"
	StreamError         StreamEventType = "error"
)

// StreamEvent is one step of a streamed response.
type StreamEvent struct {
	Type StreamEventType
	// ContentIndex is the index of the block a block event is about.
	ContentIndex int
	// Delta is the new text of a *_delta event (for tool calls, a fragment
	// of the argument JSON).
	Delta string
	// Content is the block's complete text, on text_end and thinking_end.
	Content string
	// ToolCall is the finished call, on toolcall_end.
	ToolCall *ToolCall
	// Reason is the stop reason, on done and error.
	Reason StopReason
	// Message is the message on start (no blocks yet), done and error (the
	// final message). On block events a builder (package providers/kit)
	// leaves it nil and sets Ref instead: read the message so far with
	// Partial. A provider that builds its events without one, or a
	// decoder, may set it on block events too.
	Message *AssistantMessage
	// Ref, when Message is nil, refers to the message as it stood at this
	// event without copying it; Partial reads it.
	Ref PartialRef
}

// A PartialRef is a streamed message as it stood at one event, put
// together only when asked for. A stream of n events that each carried a
// copy would cost O(n²); one whose events carry a PartialRef costs O(n).
// The builder in package providers/kit makes them; a provider with its own
// may implement it too. PartialMessage returns a new value on each call,
// which never changes afterwards.
type PartialRef interface {
	PartialMessage() *AssistantMessage
}

// Partial returns the message as it stood at this event: the partial
// message on start and block events, the final message on done and error.
// It is nil only for an event that carries no message at all.
//
// An event from a builder holds a reference (Ref), not a copy, so
// streaming n events costs O(n) however many blocks the message grows to;
// Partial puts the message together when called, in O(blocks), sharing the
// text already streamed. Each call returns a new value, and it never
// changes afterwards whatever the stream does next.
func (e StreamEvent) Partial() *AssistantMessage {
	if e.Message != nil || e.Ref == nil {
		return e.Message
	}
	return e.Ref.PartialMessage()
}

// MarshalJSON encodes the event with the reference's field names: the
// message is "partial" on start and block events, "message" on done and
// "error" on error. Without a message (the wire form) a toolcall_start
// carries the call's id and name as "toolCall".
func (e StreamEvent) MarshalJSON() ([]byte, error) {
	type out struct {
		Type         StreamEventType   `json:"type"`
		ContentIndex *int              `json:"contentIndex,omitempty"`
		Delta        string            `json:"delta,omitempty"`
		Content      string            `json:"content,omitempty"`
		ToolCall     *ToolCall         `json:"toolCall,omitempty"`
		Reason       StopReason        `json:"reason,omitempty"`
		Partial      *AssistantMessage `json:"partial,omitempty"`
		Message      *AssistantMessage `json:"message,omitempty"`
		Error        *AssistantMessage `json:"error,omitempty"`
	}
	o := out{Type: e.Type, Delta: e.Delta, Content: e.Content, ToolCall: e.ToolCall, Reason: e.Reason}
	m := e.Partial()
	if e.Type == StreamToolCallStart && m != nil {
		o.ToolCall = nil // the partial message names the call, as the reference has it
	}
	switch e.Type {
	case StreamStart:
		o.Partial = m
	case StreamDone:
		o.Message = m
	case StreamError:
		o.Error = m
	default:
		i := e.ContentIndex
		o.ContentIndex = &i
		o.Partial = m
	}
	return json.Marshal(o)
}

// UnmarshalJSON decodes the reference's encoding.
func (e *StreamEvent) UnmarshalJSON(data []byte) error {
	var in struct {
		Type         StreamEventType   `json:"type"`
		ContentIndex int               `json:"contentIndex"`
		Delta        string            `json:"delta"`
		Content      string            `json:"content"`
		ToolCall     *ToolCall         `json:"toolCall"`
		Reason       StopReason        `json:"reason"`
		Partial      *AssistantMessage `json:"partial"`
		Message      *AssistantMessage `json:"message"`
		Error        *AssistantMessage `json:"error"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	msg := in.Partial
	if in.Message != nil {
		msg = in.Message
	}
	if in.Error != nil {
		msg = in.Error
	}
	*e = StreamEvent{Type: in.Type, ContentIndex: in.ContentIndex, Delta: in.Delta, Content: in.Content,
		ToolCall: in.ToolCall, Reason: in.Reason, Message: msg}
	return nil
}
