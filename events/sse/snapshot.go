package sse

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/tools"
)

// conversation is what a Broker keeps of the events it was given, apart
// from its replay buffer, so that a client starting from nothing gets the
// state in one piece: the messages that ended (bounded by bytes, the
// oldest dropped first), the message in flight, the tool calls running,
// and whether a run is going on.
//
// A snapshot shares the conversation's parts instead of copying them, so
// nothing a snapshot holds is ever changed in place: the messages are a
// window, and the tool calls a log of records, each of which says from
// which event on it no longer holds. Every event costs O(1), however many
// calls are running.
type conversation struct {
	messages window[json.RawMessage]
	bytes    int
	omitted  int
	inflight events.Assembler
	running  bool
	tools    []*toolRecord          // appended to; views are clipped
	live     map[string]*toolRecord // the record that holds for each call running
	dead     int                    // records in tools that no longer hold
}

// toolRecord is a running call as of one event: an update or the end
// marks it gone, and an update appends the next record.
type toolRecord struct {
	runningTool
	order uint64        // the id of the call's start event: snapshots list calls in start order
	gone  atomic.Uint64 // the id of the event from which this record no longer holds; 0 while it does
}

// runningTool is a tool call between its start and end events.
type runningTool struct {
	ID      string         `json:"toolCallId"`
	Name    string         `json:"toolName"`
	Args    map[string]any `json:"args"`
	Partial *tools.Result  `json:"partialResult,omitempty"`
}

// encodeMessage encodes the message a message_end closes (the
// conversation keeps it), outside the Broker's lock; nil for other events.
func encodeMessage(e events.Event) json.RawMessage {
	end, ok := e.(events.MessageEnd)
	if !ok {
		return nil
	}
	data, err := json.Marshal(end.Message)
	if err != nil {
		return nil
	}
	return data
}

// add folds in event at; msg is encodeMessage(e), max bounds the bytes of
// the messages kept.
func (c *conversation) add(at uint64, e events.Event, msg json.RawMessage, max int) {
	if len(events.EnvelopeOf(e).Path) > 0 {
		return // a nested run's events stream live; the snapshot is the top-level run's
	}
	c.inflight.Add(e)
	switch e := e.(type) {
	case events.AgentStart:
		c.running = true
	case events.AgentEnd:
		// Earlier snapshots keep the old log, as it was for them.
		c.running, c.tools, c.live, c.dead = false, nil, nil, 0
	case events.MessageEnd:
		if msg == nil {
			return
		}
		c.messages.push(msg)
		c.bytes += len(msg)
		for c.bytes > max && c.messages.len() > 1 {
			size := len(c.messages.oldest())
			c.bytes -= size
			c.messages.drop(size, max)
			c.omitted++
		}
	case events.ToolExecutionStart:
		args := e.Args
		if args == nil {
			args = map[string]any{}
		}
		c.endTool(at, e.ToolCallID) // a repeated start replaces the call
		c.addTool(&toolRecord{runningTool: runningTool{ID: e.ToolCallID, Name: e.ToolName, Args: args}, order: at})
	case events.ToolExecutionUpdate:
		if old := c.endTool(at, e.ToolCallID); old != nil {
			p := e.Partial
			r := &toolRecord{runningTool: old.runningTool, order: old.order}
			r.Partial = &p
			c.addTool(r)
		}
	case events.ToolExecutionEnd:
		c.endTool(at, e.ToolCallID)
	}
}

func (c *conversation) addTool(r *toolRecord) {
	if c.live == nil {
		c.live = map[string]*toolRecord{}
	}
	c.live[r.ID] = r
	c.tools = append(c.tools, r)
}

// endTool marks the call's record gone from event at on and returns it
// (nil if the call is not running). Once half the log is gone, the log
// moves to a fresh array of the records that hold: O(1) per record,
// amortized.
func (c *conversation) endTool(at uint64, id string) *toolRecord {
	r := c.live[id]
	if r == nil {
		return nil
	}
	r.gone.Store(at)
	delete(c.live, id)
	if c.dead++; c.dead > len(c.tools)/2 {
		fresh := make([]*toolRecord, 0, len(c.live))
		for _, t := range c.tools {
			if t.gone.Load() == 0 {
				fresh = append(fresh, t)
			}
		}
		c.tools, c.dead = fresh, 0
	}
	return r
}

// snapshot returns the state as of event at, for every client that asks
// before the next event. It costs a reference to each part, O(1); clients
// put the message in flight together and encode it all later, outside the
// Broker's lock.
func (c *conversation) snapshot(at uint64) *snapshot {
	return &snapshot{at: at, tools: slices.Clip(c.tools), streaming: c.inflight.Latest(), frame: snapshotFrame{Type: "snapshot",
		V: events.WireVersion, Messages: c.messages.kept(), Omitted: c.omitted, Running: c.running}}
}

// snapshot is the conversation as of one event, never changed: clients
// encode it outside the Broker's lock, once for all of them.
type snapshot struct {
	at    uint64 // the id of the newest event it includes
	frame snapshotFrame
	tools []*toolRecord // the frame's Tools: those that held at event at
	// streaming's Partial is the frame's Streaming
	streaming providers.StreamEvent
	once      sync.Once
	data      []byte
}

// runningTools returns the calls running as of the snapshot's event, in
// the order they started.
func (s *snapshot) runningTools() []runningTool {
	var held []*toolRecord
	for _, r := range s.tools {
		if g := r.gone.Load(); g == 0 || g > s.at {
			held = append(held, r)
		}
	}
	slices.SortFunc(held, func(a, b *toolRecord) int { return cmp.Compare(a.order, b.order) })
	running := make([]runningTool, len(held))
	for i, r := range held {
		running[i] = r.runningTool
	}
	return running
}

// snapshotFrame is the data of a snapshot event.
type snapshotFrame struct {
	Type      string            `json:"type"`
	V         int               `json:"v"`
	Messages  []json.RawMessage `json:"messages"`
	Omitted   int               `json:"omitted"`
	Streaming any               `json:"streaming"`
	Running   bool              `json:"running"`
	Tools     []runningTool     `json:"tools"`
}

// encode returns the snapshot event's data. The first caller encodes it;
// the others wait for that and share the bytes. The messages were encoded
// as they ended and are copied as they are, so a snapshot costs its size in
// copying, not a second encoding of the transcript.
func (s *snapshot) encode() []byte {
	s.once.Do(func() {
		f := s.frame
		if m := s.streaming.Partial(); m != nil {
			f.Streaming = m
		}
		streaming, err1 := json.Marshal(f.Streaming)
		tools, err2 := json.Marshal(s.runningTools())
		if err1 != nil || err2 != nil {
			streaming, tools = []byte("null"), []byte("[]")
		}
		size := 160 + len(streaming) + len(tools)
		for _, m := range f.Messages {
			size += len(m) + 1
		}
		b := make([]byte, 0, size)
		b = fmt.Appendf(b, `{"type":"snapshot","v":%d,"messages":[`, f.V)
		for i, m := range f.Messages {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, m...)
		}
		b = fmt.Appendf(b, `],"omitted":%d,"streaming":%s,"running":%t,"tools":%s}`, f.Omitted, streaming, f.Running, tools)
		s.data = b
	})
	return s.data
}
