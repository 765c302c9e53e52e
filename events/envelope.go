package events

import (
	"context"
	"fmt"
	"strings"
)

// Envelope is where an event stands in its run: its position in the run's
// order, the chain of tool calls that led to it, and the model attempt it
// belongs to. Every event type embeds one, so a handler reads it from any
// event (EnvelopeOf, or e.Envelope after a type switch) and the event
// types stay one closed set.
//
// The loop fills the envelope of every event it publishes; an event built
// by hand has the zero Envelope. Marshal (the reference's JSON) leaves it
// out; MarshalWire writes it (wire version 2).
type Envelope struct {
	// Seq is the event's position in its run (see Seq for the rule).
	Seq Seq
	// Path is the chain of tool call ids from the top-level run down to the
	// run that published the event: empty for the top-level run's own
	// events, ["call_1"] for the events of a run nested in the body of the
	// parent's call call_1, and so on (see Nest). Each run numbers its own
	// events, so a sequence is per path. The slice is shared: read only.
	Path []string
	// Attempt numbers the attempts at one stream (see Seq), from 0: a
	// model message retried or failed over, a tool body run again. A
	// message_update whose Attempt is greater than the attempt a consumer
	// has folded for that message starts the message over: what the
	// earlier attempt streamed (a retried request, a provider the run
	// failed over from) is to be dropped, not shown. The run's own events
	// have Attempt 0.
	Attempt int
}

// Seq is an event's position in its run's order. A run's own events are
// numbered N = 1, 2, 3, ... without gaps, with Sub 0. An own event may
// open a stream that another publisher feeds while the run goes on (an
// activity on another machine, a tool body on its goroutine):
//
//   - an assistant message's message_start opens the model's stream: its
//     message_update events carry the message_start's N and Sub 1, 2, ...;
//   - a tool_execution_start opens the body's stream: its
//     tool_execution_update events carry the start's N and Sub 1, 2, ....
//
// Sub counts without gaps within one attempt (Envelope.Attempt) and starts
// again at 1 with the next attempt, since a retried publisher cannot know
// how far the one before it got. The stream ends with the run's own
// message_end or tool_execution_end, which carries the whole message or
// result, so deltas lost at a stream's tail lose nothing.
//
// So no two publishers of one run ever number the same event, and none
// waits for another: the run owns N, each stream owns its Subs. Events are
// delivered in publishing order: the run's own events in order of N, each
// stream's in order of Sub, streams interleaved with each other and with
// the run's later events (parallel tool bodies). A subscriber detects a
// gap when an own event's N is not one more than the last own N it saw, or
// a stream's Sub is not one more than the last Sub it saw of that stream
// and attempt (1 for an attempt's first); SeqCheck applies this rule.
type Seq struct {
	N   uint64
	Sub uint64
}

// String writes the position as "N" for an own event and "N.Sub" for a
// stream's event.
func (s Seq) String() string {
	if s.Sub == 0 {
		return fmt.Sprint(s.N)
	}
	return fmt.Sprintf("%d.%d", s.N, s.Sub)
}

// envelope returns the event's Envelope; every event type has it through
// the embedded field.
func (e Envelope) envelope() Envelope { return e }

// EnvelopeOf returns e's envelope (the zero Envelope for a nil event).
func EnvelopeOf(e Event) Envelope {
	if e == nil {
		return Envelope{}
	}
	return e.envelope()
}

// WithEnvelope returns e with its envelope replaced by env; e itself is not
// changed (events are values). A publisher other than the loop (a process
// relaying a run's events, a durable run's activity) uses it to stamp the
// events it publishes.
func WithEnvelope(e Event, env Envelope) Event {
	// A type switch, not a method: the event given does not escape, so a
	// caller's boxed event can stay on its stack.
	switch x := e.(type) {
	case AgentStart:
		x.Envelope = env
		return x
	case AgentEnd:
		x.Envelope = env
		return x
	case TurnStart:
		x.Envelope = env
		return x
	case TurnEnd:
		x.Envelope = env
		return x
	case MessageStart:
		x.Envelope = env
		return x
	case MessageUpdate:
		x.Envelope = env
		return x
	case MessageEnd:
		x.Envelope = env
		return x
	case ToolExecutionStart:
		x.Envelope = env
		return x
	case ToolExecutionUpdate:
		x.Envelope = env
		return x
	case ToolExecutionEnd:
		x.Envelope = env
		return x
	case ToolsChanged:
		x.Envelope = env
		return x
	case Compacted:
		x.Envelope = env
		return x
	}
	return nil // e is nil: the set of events is closed
}

// Nest returns a handler that publishes a nested run's events through h,
// the parent's handler, with callID put in front of each event's path: a
// run whose body runs a child agent for the call callID passes
// Nest(parentSink, callID) as the child's sink, and the parent's
// subscribers see the child's events, numbered by the child, with the path
// [callID, ...]. Nests nest: Nest(Nest(h, "a"), "b") publishes paths
// ["a", "b", ...]. Runs nested one after another in one call share its
// path, each numbered from its agent_start; runs nested side by side in
// one call need a path each: Nest(Nest(h, callID), "2") for the second.
//
// Nest adds no lock: the child publishes from its own goroutine beside
// the parent's run, so h must take calls from several goroutines and keep
// one order, as a Bus's Handle does (a handler given to loop.Run is
// called one event at a time by that run only).
func Nest(h Handler, callID string) Handler {
	if h == nil {
		return func(context.Context, Event) {}
	}
	return func(ctx context.Context, e Event) {
		if e == nil {
			return
		}
		env := e.envelope()
		path := make([]string, 0, len(env.Path)+1)
		env.Path = append(append(path, callID), env.Path...)
		h(ctx, WithEnvelope(e, env))
	}
}

// DefaultMaxOpen is SeqCheck.MaxOpen's default.
const DefaultMaxOpen = 4096

// SeqCheck follows the sequence of a run's events (Seq's rule), per path,
// and says where events are missing: a subscriber of a transport that may
// lose or repeat events (a relay, a resumed connection) feeds it every
// event it receives. Each run numbers from 1, from its agent_start to its
// agent_end; the next run at a path (an agent's next prompt) starts at 1
// again.
//
// The zero value is ready to use; a SeqCheck is not safe for concurrent
// use.
type SeqCheck struct {
	// MaxOpen bounds what it follows at once: runs not yet ended (one per
	// path) and streams not yet closed (a message in flight, tool calls
	// not yet ended). Zero means DefaultMaxOpen. An event that would open
	// one more is an error and is not noted.
	MaxOpen int

	runs map[string]*seqState // by path, joined
	open int                  // runs and streams followed
}

type seqState struct {
	n       uint64                  // the last own N
	message uint64                  // the open message stream's N, or 0
	calls   map[string]uint64       // open tool streams' N, by call id
	streams map[uint64]*streamState // open streams, by the opener's N
}

type streamState struct {
	attempt int
	sub     uint64
}

// Check notes e and returns an error when e does not follow the events
// before it under Seq's rule: an own event that skips or repeats an N, a
// stream's event that skips or repeats a Sub, belongs to a stream not
// open, or to an attempt earlier than one seen. An event with no position
// (Seq zero) is an error too, as is one past MaxOpen. Each error names the
// path and the positions.
func (c *SeqCheck) Check(e Event) error {
	env := EnvelopeOf(e)
	s := env.Seq
	where := "events: run"
	if len(env.Path) > 0 {
		where = "events: run at " + strings.Join(env.Path, " > ")
	}
	key := pathKey(env.Path)
	if c.runs == nil {
		c.runs = make(map[string]*seqState)
	}
	st := c.runs[key]
	_, isStart := e.(AgentStart)
	if st != nil && isStart && s == (Seq{N: 1}) {
		// The next run at this path, without the last one's end.
		c.drop(key, st)
		st = nil
	}
	if st == nil {
		if err := c.room(where); err != nil {
			return err
		}
		st = &seqState{calls: make(map[string]uint64), streams: make(map[uint64]*streamState)}
		c.runs[key] = st
		c.open++
	}
	if s.Sub == 0 {
		return c.own(e, st, key, where)
	}
	str := st.streams[s.N]
	if str == nil {
		return fmt.Errorf("%s: %s event %s of a stream not open", where, typeOf(e), s)
	}
	switch {
	case env.Attempt < str.attempt:
		return fmt.Errorf("%s: %s event %s of attempt %d after attempt %d", where, typeOf(e), s, env.Attempt, str.attempt)
	case env.Attempt > str.attempt:
		str.attempt, str.sub = env.Attempt, 0
	}
	if s.Sub != str.sub+1 {
		return fmt.Errorf("%s: %s event %s after %d.%d", where, typeOf(e), s, s.N, str.sub)
	}
	str.sub = s.Sub
	return nil
}

// own checks and notes one of a run's own events.
func (c *SeqCheck) own(e Event, st *seqState, key, where string) error {
	n := EnvelopeOf(e).Seq.N
	if n != st.n+1 {
		return fmt.Errorf("%s: %s event %d after %d", where, typeOf(e), n, st.n)
	}
	switch e := e.(type) {
	case MessageStart:
		if _, ok := st.streams[st.message]; !ok {
			if err := c.room(where); err != nil {
				return err
			}
			c.open++
		}
		delete(st.streams, st.message)
		st.message = n
		st.streams[n] = &streamState{}
	case MessageEnd:
		c.closeStream(st, st.message)
		st.message = 0
	case ToolExecutionStart:
		if err := c.room(where); err != nil {
			return err
		}
		c.closeStream(st, st.calls[e.ToolCallID]) // a repeated id replaces its stream
		st.calls[e.ToolCallID] = n
		st.streams[n] = &streamState{}
		c.open++
	case ToolExecutionEnd:
		if opened, ok := st.calls[e.ToolCallID]; ok {
			c.closeStream(st, opened)
			delete(st.calls, e.ToolCallID)
		}
	case AgentEnd:
		c.drop(key, st) // the run is over; the next one starts at 1
		return nil
	}
	st.n = n
	return nil
}

// room reports an error when following one more run or stream would pass
// MaxOpen.
func (c *SeqCheck) room(where string) error {
	limit := c.MaxOpen
	if limit <= 0 {
		limit = DefaultMaxOpen
	}
	if c.open >= limit {
		return fmt.Errorf("%s: more than %d runs and streams open at once (SeqCheck.MaxOpen)", where, limit)
	}
	return nil
}

func (c *SeqCheck) closeStream(st *seqState, n uint64) {
	if _, ok := st.streams[n]; ok {
		delete(st.streams, n)
		c.open--
	}
}

// drop forgets a run and its open streams.
func (c *SeqCheck) drop(key string, st *seqState) {
	c.open -= 1 + len(st.streams)
	delete(c.runs, key)
}

// pathKey names a path unambiguously: each id with its length, so no two
// paths share a key (["a/b"] and ["a", "b"], [""] and []).
func pathKey(path []string) string {
	var b strings.Builder
	for _, id := range path {
		fmt.Fprintf(&b, "%d:%s", len(id), id)
	}
	return b.String()
}

// typeOf returns e's type, or "" for nil: for error texts.
func typeOf(e Event) Type {
	if e == nil {
		return ""
	}
	return e.Type()
}
