package providers

import "strings"

// Builder assembles a streamed assistant message and produces the
// [StreamEvent] values that describe it. Providers use it so that every
// event carries an immutable snapshot of the message at little cost: text
// grows in append-only buffers, so a snapshot shares the bytes already
// written instead of copying them, and earlier snapshots never change.
//
// A Builder is used by one goroutine. Call Start first, then open, extend
// and end one block at a time, and finish with Done or Fail.
type Builder struct {
	msg    AssistantMessage // header fields and the finished blocks
	open   openBlock
	kind   StreamEventType // the *_start type of the open block, "" if none
	text   strings.Builder
	args   strings.Builder
	closed bool
}

type openBlock struct {
	signature string
	call      ToolCall
}

// NewBuilder returns a Builder for a message from the given model.
func NewBuilder(m Model) *Builder {
	return &Builder{msg: AssistantMessage{API: m.API, Provider: m.Provider, Model: m.ID, Timestamp: Now()}}
}

// Start returns the start event.
func (b *Builder) Start() StreamEvent {
	return StreamEvent{Type: StreamStart, Message: b.snapshot(StopReasonPending)}
}

// TextStart opens a text block.
func (b *Builder) TextStart() StreamEvent { return b.begin(StreamTextStart) }

// TextDelta appends to the open text block.
func (b *Builder) TextDelta(delta string) StreamEvent {
	b.text.WriteString(delta)
	return b.event(StreamTextDelta, delta)
}

// TextEnd closes the open text block.
func (b *Builder) TextEnd() StreamEvent { return b.end(StreamTextEnd) }

// ThinkingStart opens a thinking block.
func (b *Builder) ThinkingStart() StreamEvent { return b.begin(StreamThinkingStart) }

// ThinkingDelta appends to the open thinking block.
func (b *Builder) ThinkingDelta(delta string) StreamEvent {
	b.text.WriteString(delta)
	return b.event(StreamThinkingDelta, delta)
}

// ThinkingEnd closes the open thinking block with the provider's signature
// (empty when it sent none).
func (b *Builder) ThinkingEnd(signature string) StreamEvent {
	b.open.signature = signature
	return b.end(StreamThinkingEnd)
}

// ToolCallStart opens a tool-call block.
func (b *Builder) ToolCallStart(id, name string) StreamEvent {
	ev := b.begin(StreamToolCallStart)
	b.open.call = ToolCall{ID: id, Name: name, Arguments: map[string]any{}}
	ev.Message = b.snapshot(StopReasonPending)
	return ev
}

// ToolCallDelta appends a fragment of argument JSON to the open tool call.
// preview, when not nil, is the best-effort parse of the arguments so far;
// snapshots show it as the call's arguments.
func (b *Builder) ToolCallDelta(fragment string, preview map[string]any) StreamEvent {
	b.args.WriteString(fragment)
	if preview != nil {
		b.open.call.Arguments = preview
	}
	return b.event(StreamToolCallDelta, fragment)
}

// ToolCallEnd closes the open tool call with its final arguments. complete
// reports whether the streamed argument text was complete JSON; a call that
// was not is marked Incomplete and will not run.
func (b *Builder) ToolCallEnd(args map[string]any, complete bool) StreamEvent {
	if args == nil {
		args = map[string]any{}
	}
	b.open.call.Arguments = args
	b.open.call.Incomplete = !complete
	return b.end(StreamToolCallEnd)
}

// Done finishes the message with a stop reason and usage and returns the
// done event. Any block still open is closed first.
func (b *Builder) Done(reason StopReason, usage Usage) StreamEvent {
	b.closeOpen()
	b.msg.Usage = usage
	b.closed = true
	return StreamEvent{Type: StreamDone, Reason: reason, Message: b.snapshot(reason)}
}

// Fail finishes the message as failed (reason error or aborted) with the
// error text and returns the error event. What was streamed so far is kept.
func (b *Builder) Fail(reason StopReason, errorMessage string, usage Usage) StreamEvent {
	b.closeOpen()
	b.msg.Usage = usage
	b.msg.ErrorMessage = errorMessage
	b.closed = true
	return StreamEvent{Type: StreamError, Reason: reason, Message: b.snapshot(reason)}
}

// Open reports the kind of the open block (StreamTextStart,
// StreamThinkingStart or StreamToolCallStart), or "" when none is open.
func (b *Builder) Open() StreamEventType { return b.kind }

// Blocks reports how many blocks the message has, the open one included.
func (b *Builder) Blocks() int {
	if b.kind != "" {
		return len(b.msg.Content) + 1
	}
	return len(b.msg.Content)
}

// Snapshot returns the message as it stands, still pending.
func (b *Builder) Snapshot() *AssistantMessage { return b.snapshot(StopReasonPending) }

func (b *Builder) begin(t StreamEventType) StreamEvent {
	b.closeOpen()
	b.kind = t
	b.open = openBlock{}
	b.text = strings.Builder{}
	b.args = strings.Builder{}
	return b.event(t, "")
}

func (b *Builder) event(t StreamEventType, delta string) StreamEvent {
	return StreamEvent{Type: t, ContentIndex: len(b.msg.Content), Delta: delta, Message: b.snapshot(StopReasonPending)}
}

func (b *Builder) end(t StreamEventType) StreamEvent {
	if b.kind == "" {
		return StreamEvent{Type: t, ContentIndex: len(b.msg.Content), Message: b.snapshot(StopReasonPending)}
	}
	block := b.current()
	idx := len(b.msg.Content)
	b.msg.Content = append(b.msg.Content, block)
	b.kind = ""
	ev := StreamEvent{Type: t, ContentIndex: idx, Message: b.snapshot(StopReasonPending)}
	switch c := block.(type) {
	case Text:
		ev.Content = c.Text
	case Thinking:
		ev.Content = c.Thinking
	case ToolCall:
		ev.ToolCall = &c
	}
	return ev
}

func (b *Builder) closeOpen() {
	switch b.kind {
	case StreamTextStart:
		b.end(StreamTextEnd)
	case StreamThinkingStart:
		b.end(StreamThinkingEnd)
	case StreamToolCallStart:
		b.open.call.Incomplete = true
		b.end(StreamToolCallEnd)
	}
}

// current returns the open block as it stands.
func (b *Builder) current() Content {
	switch b.kind {
	case StreamTextStart:
		return Text{Text: b.text.String()}
	case StreamThinkingStart:
		return Thinking{Thinking: b.text.String(), Signature: b.open.signature}
	case StreamToolCallStart:
		c := b.open.call
		c.RawArguments = b.args.String()
		return c
	}
	return nil
}

// snapshot copies the message header and the block list (not the text the
// blocks hold) and appends the open block.
func (b *Builder) snapshot(reason StopReason) *AssistantMessage {
	m := b.msg
	m.StopReason = reason
	n := len(b.msg.Content)
	if b.kind != "" {
		n++
	}
	m.Content = make([]Content, n)
	copy(m.Content, b.msg.Content)
	if b.kind != "" {
		m.Content[n-1] = b.current()
	}
	return &m
}
