package sse

import (
	"encoding/json"
	"slices"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/tools"
)

// conversation is what a Broker keeps of the events it was given, apart
// from its replay buffer, so that a client starting from nothing gets the
// state in one piece: the messages that ended (bounded by bytes, the
// oldest dropped first), the message in flight, the tool calls running,
// and whether a run is going on.
type conversation struct {
	messages []json.RawMessage
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

// add folds one event in; max bounds the bytes of the messages kept.
func (c *conversation) add(e events.Event, max int) {
	c.inflight.Add(e)
	switch e := e.(type) {
	case events.AgentStart:
		c.running = true
	case events.AgentEnd:
		c.running, c.tools = false, nil
	case events.MessageEnd:
		data, err := json.Marshal(e.Message)
		if err != nil {
			return
		}
		c.messages = append(c.messages, data)
		c.bytes += len(data)
		for c.bytes > max && len(c.messages) > 1 {
			c.bytes -= len(c.messages[0])
			c.messages[0] = nil
			c.messages = c.messages[1:]
			c.omitted++
		}
	case events.ToolExecutionStart:
		args := e.Args
		if args == nil {
			args = map[string]any{}
		}
		c.tools = append(c.tools, runningTool{ID: e.ToolCallID, Name: e.ToolName, Args: args})
	case events.ToolExecutionUpdate:
		if i := c.tool(e.ToolCallID); i >= 0 {
			p := e.Partial
			c.tools[i].Partial = &p
		}
	case events.ToolExecutionEnd:
		if i := c.tool(e.ToolCallID); i >= 0 {
			c.tools = slices.Delete(c.tools, i, i+1)
		}
	}
}

func (c *conversation) tool(id string) int {
	return slices.IndexFunc(c.tools, func(t runningTool) bool { return t.ID == id })
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

// snapshot encodes the state as a snapshot event's data.
func (c *conversation) snapshot() []byte {
	f := snapshotFrame{Type: "snapshot", V: events.WireVersion, Messages: c.messages, Omitted: c.omitted, Running: c.running, Tools: c.tools}
	if f.Messages == nil {
		f.Messages = []json.RawMessage{}
	}
	if f.Tools == nil {
		f.Tools = []runningTool{}
	}
	if m := c.inflight.Message(); m != nil {
		f.Streaming = m
	}
	data, err := json.Marshal(f)
	if err != nil {
		return []byte(`{"type":"snapshot","v":1,"messages":[],"omitted":0,"streaming":null,"running":false,"tools":[]}`)
	}
	return data
}
