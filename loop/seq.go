package loop

import "github.com/agentloop/agentloop/events"

// stream numbers the events of a stream that one of the run's own events
// opened (events.Seq): an assistant message's updates under its
// message_start, a tool body's updates under its tool_execution_start.
type stream struct {
	n       uint64 // the opening event's number
	sub     uint64 // the last event's number within the stream
	attempt int    // the model attempt (message streams)
}

// envelope numbers the next event: an own event (in == nil) takes the
// run's next number; a stream's event the stream's next. The caller holds
// emitMu. The path is empty: a nested run's sink adds its call ids
// (events.Nest).
func (r *run) envelope(in *stream) events.Envelope {
	if in == nil {
		r.seq++
		return events.Envelope{Seq: events.Seq{N: r.seq}}
	}
	in.sub++
	return events.Envelope{Seq: events.Seq{N: in.n, Sub: in.sub}, Attempt: in.attempt}
}

// emitIn publishes an event of the stream in.
func (r *run) emitIn(in *stream, e events.Event) { r.publish(e, in, nil) }

// emitOpening publishes an own event that opens the stream opens.
func (r *run) emitOpening(opens *stream, e events.Event) { r.publish(e, nil, opens) }

// newAttempt starts the numbering of the message's next attempt.
func (r *run) newAttempt() {
	r.emitMu.Lock()
	r.msg.attempt++
	r.msg.sub = 0
	r.emitMu.Unlock()
}
