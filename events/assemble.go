package events

import "github.com/agentloop/agentloop/providers"

// Assembler rebuilds the assistant message in flight from events in the
// wire form (MarshalWire), whose updates carry only their change: a NATS
// subscriber, say, that shows the answer as it streams. Feed it every
// event in order; Message returns the message so far. The message_end that
// closes the message carries it whole and is what to keep.
//
// The zero value is ready to use. An Assembler is not safe for concurrent
// use.
type Assembler struct {
	b *providers.Builder
}

// Add folds one event in.
func (a *Assembler) Add(e Event) {
	switch e := e.(type) {
	case MessageStart:
		a.b = nil
		if m, ok := e.Message.(providers.AssistantMessage); ok {
			a.b = providers.NewBuilder(providers.Model{ID: m.Model, API: m.API, Provider: m.Provider})
			a.b.Start()
		}
	case MessageEnd:
		a.b = nil
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
		b.TextStart()
	case providers.StreamTextDelta:
		b.TextDelta(ev.Delta)
	case providers.StreamTextEnd:
		b.TextEnd()
	case providers.StreamThinkingStart:
		b.ThinkingStart()
	case providers.StreamThinkingDelta:
		b.ThinkingDelta(ev.Delta)
	case providers.StreamThinkingEnd:
		b.ThinkingEnd("") // the signature comes with message_end
	case providers.StreamToolCallStart:
		if ev.ToolCall != nil {
			b.ToolCallStart(ev.ToolCall.ID, ev.ToolCall.Name)
		}
	case providers.StreamToolCallDelta:
		b.ToolCallDeltaAt(ev.ContentIndex, ev.Delta, nil)
	case providers.StreamToolCallEnd:
		if ev.ToolCall != nil {
			b.ToolCallEndAt(ev.ContentIndex, ev.ToolCall.Arguments, !ev.ToolCall.Incomplete)
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
