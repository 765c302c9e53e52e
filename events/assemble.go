package events

import (
	"slices"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/kit"
)

// Assembler rebuilds the assistant message in flight from events in the
// wire form (MarshalWire), whose updates carry only their change: a NATS
// subscriber, say, that shows the answer as it streams. Feed it every
// event in order; Message returns the message so far. The message_end that
// closes the message carries it whole and is what to keep.
//
// An update of a later model attempt (Envelope.Attempt) than the one
// folded so far starts the message over: what the earlier attempt
// streamed is dropped, and the message restarts from the new attempt's
// start (a message_update of type "start" carrying the model that now
// answers) or else from the message_start. Updates of an earlier attempt
// than the current one are stale and ignored.
//
// An Assembler follows one run's messages: the top-level run's, or with
// Path set a nested run's (Envelope.Path); it ignores the events of other
// paths, so it may be fed a whole bus.
//
// The zero value is ready to use. An Assembler is not safe for concurrent
// use.
type Assembler struct {
	// Path is the path of the run whose message it assembles; nil for the
	// top-level run.
	Path []string

	b       *kit.Builder
	latest  providers.StreamEvent // the builder's event for the last change
	start   providers.Model       // the message_start's model
	attempt int                   // the attempt folded so far
}

// Add folds one event in.
func (a *Assembler) Add(e Event) {
	if e == nil || !slices.Equal(e.envelope().Path, a.Path) {
		return
	}
	switch e := e.(type) {
	case MessageStart:
		a.b, a.latest, a.attempt = nil, providers.StreamEvent{}, e.Attempt
		if m, ok := e.Message.(providers.AssistantMessage); ok {
			a.start = providers.Model{ID: m.Model, API: m.API, Provider: m.Provider}
			a.restart(a.start)
		}
	case MessageEnd:
		a.b, a.latest = nil, providers.StreamEvent{}
	case MessageUpdate:
		if a.b == nil || e.Attempt < a.attempt {
			return
		}
		if e.Attempt > a.attempt {
			a.attempt = e.Attempt
			a.restart(a.start)
		}
		a.apply(e.Stream)
	}
}

// restart begins the message in flight anew for model m.
func (a *Assembler) restart(m providers.Model) {
	a.b = kit.NewBuilder(m)
	a.latest = a.b.Start()
}

func (a *Assembler) apply(ev providers.StreamEvent) {
	b := a.b
	switch ev.Type {
	case providers.StreamStart:
		// A new attempt's start: the message begins again, with the model
		// that now answers.
		if m := ev.Message; m != nil {
			a.restart(providers.Model{ID: m.Model, API: m.API, Provider: m.Provider})
		}
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
