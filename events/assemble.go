package events

import (
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/kit"
)

// Assembler rebuilds the assistant message in flight from events in the
// wire form (MarshalWire), whose updates carry only their change: a NATS
// subscriber, say, that shows the answer as it streams. Feed it every
// event in order; Message returns the message so far. The message_end that
// closes the message carries it whole and is what to keep.
//
// The zero value is ready to use. An Assembler is not safe for concurrent
// use.
type Assembler struct {
	b      *kit.Builder
	latest providers.StreamEvent // the builder's event for the last change
}

// Add folds one event in.
func (a *Assembler) Add(e Event) {
	switch e := e.(type) {
	case MessageStart:
		a.b, a.latest = nil, providers.StreamEvent{}
		if m, ok := e.Message.(providers.AssistantMessage); ok {
			a.b = kit.NewBuilder(providers.Model{ID: m.Model, API: m.API, Provider: m.Provider})
			a.latest = a.b.Start()
		}
	case MessageEnd:
		a.b, a.latest = nil, providers.StreamEvent{}
	case MessageUpdate:
		if a.b != nil {
			a.apply(e.Stream)
		}
	}
}

func (a *Assembler) apply(ev providers.StreamEvent) {
	b := a.b
	switch ev.Type {
	case providers.StreamTextStart:
		a.latest = b.TextStart()
	case providers.StreamTextDelta:
		a.latest = b.TextDelta(ev.Delta)
	case providers.StreamTextEnd:
		a.latest = b.TextEnd()
	case providers.StreamThinkingStart:
		a.latest = b.ThinkingStart()
	case providers.StreamThinkingDelta:
		a.latest = b.ThinkingDelta(ev.Delta)
	case providers.StreamThinkingEnd:
		a.latest = b.ThinkingEnd("") // the signature comes with message_end
	case providers.StreamToolCallStart:
		if ev.ToolCall != nil {
			a.latest = b.ToolCallStart(ev.ToolCall.ID, ev.ToolCall.Name)
		}
	case providers.StreamToolCallDelta:
		a.latest = b.ToolCallDeltaAt(ev.ContentIndex, ev.Delta, nil)
	case providers.StreamToolCallEnd:
		if ev.ToolCall != nil {
			a.latest = b.ToolCallEndAt(ev.ContentIndex, ev.ToolCall.Arguments, !ev.ToolCall.Incomplete)
		}
	}
}

// Message returns the message in flight so far (its blocks' text and the
// tool calls' argument text; a call's parsed arguments once it ended), or
// nil between messages.
func (a *Assembler) Message() *providers.AssistantMessage {
	if a.b == nil {
		return nil
	}
	return a.b.Snapshot()
}

// Latest returns the message in flight as a stream event whose Partial
// puts it together when called: Latest costs O(1) however many blocks the
// message has, and the event never changes whatever the Assembler is fed
// next, so another goroutine may call its Partial later (an SSE server
// keeps one per event and builds the message only for a client that
// asks). Between messages its Partial is nil.
func (a *Assembler) Latest() providers.StreamEvent { return a.latest }
