package sse

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/agentloop/agentloop/events"
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
// window, and the tools slice is replaced on every change.
type conversation struct {
	messages window[json.RawMessage]
	bytes    int
	omitted  int
	inflight events.Assembler
	running  bool
	tools    []runningTool
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

// add folds one event in; msg is encodeMessage(e), max bounds the bytes
// of the messages kept.
func (c *conversation) add(e events.Event, msg json.RawMessage, max int) {
	c.inflight.Add(e)
	switch e := e.(type) {
	case events.AgentStart:
		c.running = true
	case events.AgentEnd:
		c.running, c.tools = false, nil
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
		c.tools = append(slices.Clip(c.tools), runningTool{ID: e.ToolCallID, Name: e.ToolName, Args: args})
	case events.ToolExecutionUpdate:
		if i := c.tool(e.ToolCallID); i >= 0 {
			p := e.Partial
			c.tools = slices.Clone(c.tools)
			c.tools[i].Partial = &p
		}
	case events.ToolExecutionEnd:
		if i := c.tool(e.ToolCallID); i >= 0 {
			c.tools = slices.Concat(c.tools[:i], c.tools[i+1:])
		}
	}
}

func (c *conversation) tool(id string) int {
	return slices.IndexFunc(c.tools, func(t runningTool) bool { return t.ID == id })
}

// snapshot returns the state as of event at, for every client that asks
// before the next event. It costs a reference to each part (and the
// message in flight's list of blocks, whose text is shared); clients
// encode it later, outside the Broker's lock.
func (c *conversation) snapshot(at uint64) *snapshot {
	s := &snapshot{at: at, frame: snapshotFrame{Type: "snapshot", V: events.WireVersion,
		Messages: c.messages.kept(), Omitted: c.omitted, Running: c.running, Tools: c.tools}}
	if m := c.inflight.Message(); m != nil {
		s.frame.Streaming = m
	}
	return s
}

// snapshot is the conversation as of one event, never changed: clients
// encode it outside the Broker's lock, once for all of them.
type snapshot struct {
	at    uint64 // the id of the newest event it includes
	frame snapshotFrame
	once  sync.Once
	data  []byte
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
		if f.Tools == nil {
			f.Tools = []runningTool{}
		}
		streaming, err1 := json.Marshal(f.Streaming)
		tools, err2 := json.Marshal(f.Tools)
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
