package kit

import (
	"strings"

	"github.com/agentloop/agentloop/providers"
)

// Builder assembles a streamed assistant message and produces the
// [StreamEvent] values that describe it. Providers use it so that every
// event can give the message as it stood at that event ([StreamEvent.Partial])
// while a stream of n events costs O(n) in all: an event carries only a
// reference into the builder's history, and the message is put together
// when someone asks for it. Text grows in append-only buffers, so a
// partial message shares the bytes already written; a block's earlier
// states are kept, so earlier events' messages never change.
//
// Call Start first, then open, extend and end blocks, and finish with Done
// or Fail. One text or thinking block is open at a time (opening a block
// closes it); tool calls may stay open side by side, for providers that
// interleave their argument fragments, and are addressed by content index.
// A Builder is used by one goroutine; the events it returns may be read on
// any.
type Builder struct {
	header providers.AssistantMessage
	blocks []*block
	text   int // index of the open text or thinking block, or -1
	hist   *history
}

type block struct {
	kind     providers.StreamEventType // the *_start type
	done     bool
	final    providers.Content // once done
	text     strings.Builder
	sig      string
	redacted bool
	call     providers.ToolCall
}

// NewBuilder returns a Builder for a message from the given model, stamped
// with the wall clock (providers.Now). A provider answering a request uses
// ForRequest, which honours the caller's clock.
func NewBuilder(m providers.Model) *Builder { return newBuilder(m, providers.Now()) }

// ForRequest returns a Builder for the response to req: a message from
// req.Model stamped with req.Time, the caller's clock (a workflow engine's,
// through loop.Runtime), or with the wall clock when req.Time is zero.
func ForRequest(req *providers.Request) *Builder {
	if req.Time.IsZero() {
		return NewBuilder(req.Model)
	}
	return newBuilder(req.Model, req.Time.UnixMilli())
}

func newBuilder(m providers.Model, at int64) *Builder {
	b := &Builder{header: providers.AssistantMessage{API: m.API, Provider: m.Provider, Model: m.ID, Timestamp: at}, text: -1}
	b.hist = &history{header: b.header}
	return b
}

// Start returns the start event.
func (b *Builder) Start() providers.StreamEvent {
	return providers.StreamEvent{Type: providers.StreamStart, Message: b.snapshot(providers.StopReasonPending)}
}

// TextStart opens a text block, closing an open text or thinking block.
func (b *Builder) TextStart() providers.StreamEvent { return b.openText(providers.StreamTextStart) }

// TextDelta appends to the open text block, opening one if needed.
func (b *Builder) TextDelta(delta string) providers.StreamEvent {
	return b.appendText(providers.StreamTextStart, providers.StreamTextDelta, delta)
}

// TextEnd closes the open text block.
func (b *Builder) TextEnd() providers.StreamEvent { return b.closeText(providers.StreamTextEnd) }

// ThinkingStart opens a thinking block, closing an open text or thinking
// block.
func (b *Builder) ThinkingStart() providers.StreamEvent {
	return b.openText(providers.StreamThinkingStart)
}

// ThinkingDelta appends to the open thinking block, opening one if needed.
func (b *Builder) ThinkingDelta(delta string) providers.StreamEvent {
	return b.appendText(providers.StreamThinkingStart, providers.StreamThinkingDelta, delta)
}

// ThinkingEnd closes the open thinking block with the provider's signature
// (empty when it sent none).
func (b *Builder) ThinkingEnd(signature string) providers.StreamEvent {
	if b.text >= 0 {
		b.blocks[b.text].sig = signature
	}
	return b.closeText(providers.StreamThinkingEnd)
}

// SignAt gives the block at index the provider's opaque signature for it
// (Gemini's thought signature, which may ride on any part; a Responses
// reasoning item, whose whole form comes after the next item began): a
// text or thinking block's Signature, a tool call's. The block may already
// be closed. It makes no event; events after it, and the final message,
// show it.
func (b *Builder) SignAt(index int, signature string) {
	if index < 0 || index >= len(b.blocks) {
		return
	}
	bl := b.blocks[index]
	if bl.kind == providers.StreamToolCallStart {
		bl.call.Signature = signature
	} else {
		bl.sig = signature
	}
	if bl.done {
		bl.done = false
		b.finish(bl)
	}
	b.hist.record(b.blocks, index)
}

// Open reports the index of the open text or thinking block, or -1.
func (b *Builder) Open() int { return b.text }

// ThinkingRedacted closes the open thinking block as redacted reasoning:
// the provider sent it encrypted only (data), with no text.
func (b *Builder) ThinkingRedacted(data string) providers.StreamEvent {
	if b.text >= 0 {
		b.blocks[b.text].redacted = true
	}
	return b.ThinkingEnd(data)
}

// ToolCallStart opens a tool-call block (closing an open text or thinking
// block). The event's ContentIndex addresses the call in the *At methods;
// its ToolCall holds the call's id and name.
func (b *Builder) ToolCallStart(id, name string) providers.StreamEvent {
	b.closeTextBlock()
	bl := &block{kind: providers.StreamToolCallStart, call: providers.ToolCall{ID: id, Name: name, Arguments: map[string]any{}}}
	b.blocks = append(b.blocks, bl)
	ev := b.event(providers.StreamToolCallStart, len(b.blocks)-1, "")
	ev.ToolCall = &providers.ToolCall{ID: id, Name: name, Arguments: map[string]any{}}
	return ev
}

// ToolCallDelta appends a fragment of argument JSON to the most recently
// opened tool call; see ToolCallDeltaAt.
func (b *Builder) ToolCallDelta(fragment string, preview map[string]any) providers.StreamEvent {
	return b.ToolCallDeltaAt(b.lastCall(), fragment, preview)
}

// ToolCallDeltaAt appends a fragment of argument JSON to the open tool call
// at index. preview, when not nil, is the best-effort parse of the
// arguments so far; partial messages show it as the call's arguments. The
// Builder keeps preview as it is: pass a new map each time.
func (b *Builder) ToolCallDeltaAt(index int, fragment string, preview map[string]any) providers.StreamEvent {
	if bl := b.openCall(index); bl != nil {
		bl.text.WriteString(fragment)
		if preview != nil {
			bl.call.Arguments = preview
		}
		return b.event(providers.StreamToolCallDelta, index, fragment)
	}
	return b.event(providers.StreamToolCallDelta, index, fragment)
}

// ToolCallEnd closes the most recently opened tool call; see ToolCallEndAt.
func (b *Builder) ToolCallEnd(args map[string]any, complete bool) providers.StreamEvent {
	return b.ToolCallEndAt(b.lastCall(), args, complete)
}

// ToolCallEndAt closes the tool call at index with its final arguments.
// complete reports whether the streamed argument text was complete JSON; a
// call that was not is marked Incomplete and will not run.
func (b *Builder) ToolCallEndAt(index int, args map[string]any, complete bool) providers.StreamEvent {
	bl := b.openCall(index)
	if bl == nil {
		return b.event(providers.StreamToolCallEnd, index, "")
	}
	if args == nil {
		args = map[string]any{}
	}
	bl.call.Arguments = args
	bl.call.Incomplete = !complete
	return b.endCall(bl, index)
}

// ToolCallOverflowAt closes the tool call at index whose argument text
// passed the request's MaxArgumentBytes: total is how many bytes the model
// sent. The call keeps the text that was kept, is marked Incomplete and
// will not run; the loop's refusal says how large it was.
func (b *Builder) ToolCallOverflowAt(index, total int) providers.StreamEvent {
	bl := b.openCall(index)
	if bl == nil {
		return b.event(providers.StreamToolCallEnd, index, "")
	}
	bl.call.Arguments = map[string]any{}
	bl.call.Incomplete = true
	bl.call.ArgumentBytes = total
	return b.endCall(bl, index)
}

func (b *Builder) endCall(bl *block, index int) providers.StreamEvent {
	b.finish(bl)
	ev := b.event(providers.StreamToolCallEnd, index, "")
	c := bl.final.(providers.ToolCall)
	ev.ToolCall = &c
	return ev
}

// Done finishes the message with a stop reason and usage and returns the
// done event. Blocks still open are closed first; an open tool call is
// marked Incomplete.
func (b *Builder) Done(reason providers.StopReason, usage providers.Usage) providers.StreamEvent {
	b.closeAll()
	b.header.Usage = usage
	return providers.StreamEvent{Type: providers.StreamDone, Reason: reason, Message: b.snapshot(reason)}
}

// Fail finishes the message as failed (reason error or aborted) with the
// error text and returns the error event. What was streamed so far is kept.
func (b *Builder) Fail(reason providers.StopReason, errorMessage string, usage providers.Usage) providers.StreamEvent {
	b.closeAll()
	b.header.Usage = usage
	b.header.ErrorMessage = errorMessage
	return providers.StreamEvent{Type: providers.StreamError, Reason: reason, Message: b.snapshot(reason)}
}

// Snapshot returns the message as it stands, still pending. It costs
// O(blocks).
func (b *Builder) Snapshot() *providers.AssistantMessage {
	return b.snapshot(providers.StopReasonPending)
}

func (b *Builder) openText(kind providers.StreamEventType) providers.StreamEvent {
	b.closeTextBlock()
	b.blocks = append(b.blocks, &block{kind: kind})
	b.text = len(b.blocks) - 1
	return b.event(kind, b.text, "")
}

func (b *Builder) appendText(kind, deltaType providers.StreamEventType, delta string) providers.StreamEvent {
	if b.text < 0 || b.blocks[b.text].kind != kind {
		b.openText(kind)
	}
	b.blocks[b.text].text.WriteString(delta)
	return b.event(deltaType, b.text, delta)
}

func (b *Builder) closeText(t providers.StreamEventType) providers.StreamEvent {
	i := b.text
	if i < 0 {
		return b.event(t, len(b.blocks), "")
	}
	b.finish(b.blocks[i])
	b.text = -1
	ev := b.event(t, i, "")
	switch c := b.blocks[i].final.(type) {
	case providers.Text:
		ev.Content = c.Text
	case providers.Thinking:
		ev.Content = c.Thinking
	}
	return ev
}

func (b *Builder) closeTextBlock() {
	if b.text >= 0 {
		b.finish(b.blocks[b.text])
		b.text = -1
	}
}

func (b *Builder) closeAll() {
	b.closeTextBlock()
	for _, bl := range b.blocks {
		if !bl.done {
			bl.call.Incomplete = true
			b.finish(bl)
		}
	}
}

func (b *Builder) lastCall() int {
	for i := len(b.blocks) - 1; i >= 0; i-- {
		if b.blocks[i].kind == providers.StreamToolCallStart && !b.blocks[i].done {
			return i
		}
	}
	return -1
}

func (b *Builder) openCall(index int) *block {
	if index < 0 || index >= len(b.blocks) {
		return nil
	}
	bl := b.blocks[index]
	if bl.kind != providers.StreamToolCallStart || bl.done {
		return nil
	}
	return bl
}

// finish freezes a block's content.
func (b *Builder) finish(bl *block) {
	bl.final = bl.current()
	bl.done = true
}

// current is the block's content as it stands.
func (bl *block) current() providers.Content {
	if bl.done {
		return bl.final
	}
	switch bl.kind {
	case providers.StreamTextStart:
		return providers.Text{Text: bl.text.String(), Signature: bl.sig}
	case providers.StreamThinkingStart:
		return providers.Thinking{Thinking: bl.text.String(), Signature: bl.sig, Redacted: bl.redacted}
	}
	c := bl.call
	c.RawArguments = bl.text.String()
	return c
}

// event makes a block event about the block at index, recording that
// block's state in the history.
func (b *Builder) event(t providers.StreamEventType, index int, delta string) providers.StreamEvent {
	return providers.StreamEvent{Type: t, ContentIndex: index, Delta: delta, Ref: b.hist.record(b.blocks, index)}
}

// snapshot builds the whole message as it stands, in one piece.
func (b *Builder) snapshot(reason providers.StopReason) *providers.AssistantMessage {
	m := new(providers.AssistantMessage)
	*m = b.header
	m.StopReason = reason
	m.Content = make([]providers.Content, len(b.blocks))
	for i, bl := range b.blocks {
		m.Content[i] = bl.current()
	}
	return m
}
