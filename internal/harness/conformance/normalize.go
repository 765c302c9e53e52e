package conformance

import (
	"bytes"
	"encoding/json"
	"sort"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
)

// ordered is a JSON object that keeps its keys in the order given.
type ordered []any // key, value, key, value, ...

func obj(kv ...any) ordered { return ordered(kv) }

// MarshalJSON writes the keys in order.
func (o ordered) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := 0; i+1 < len(o); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(o[i])
		v, err := marshal(o[i+1])
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func (p *player) normalize(e events.Event) any {
	switch e := e.(type) {
	case events.AgentStart, events.TurnStart:
		return obj("type", string(e.Type()))
	case events.AgentEnd:
		msgs := make([]any, len(e.Messages))
		for i, m := range e.Messages {
			msgs[i] = summarize(m)
		}
		return obj("type", "agent_end", "messages", msgs)
	case events.TurnEnd:
		ids := []any{}
		for _, r := range e.ToolResults {
			ids = append(ids, r.ToolCallID)
		}
		return obj("type", "turn_end", "stopReason", string(e.Message.StopReason), "toolResults", ids)
	case events.MessageStart:
		o := obj("type", "message_start", "role", string(e.Message.Role()))
		if tr, ok := e.Message.(providers.ToolResultMessage); ok {
			o = append(o, "toolCallId", tr.ToolCallID)
		}
		return o
	case events.MessageEnd:
		return append(obj("type", "message_end"), summarize(e.Message)...)
	case events.ToolExecutionStart:
		return obj("type", "tool_execution_start", "toolCallId", e.ToolCallID, "toolName", e.ToolName, "args", e.Args)
	case events.ToolExecutionUpdate:
		return obj("type", "tool_execution_update", "toolCallId", e.ToolCallID, "text", providers.TextOf(e.Partial.Content))
	case events.ToolExecutionEnd:
		return obj("type", "tool_execution_end", "toolCallId", e.ToolCallID, "toolName", e.ToolName,
			"isError", e.IsError, "text", providers.TextOf(e.Result.Content))
	}
	return nil // message_update: provider chunking, not loop behaviour
}

func summarize(m providers.Message) ordered {
	switch m := m.(type) {
	case providers.UserMessage:
		return obj("role", "user", "text", m.Text())
	case providers.AssistantMessage:
		ids := []any{}
		for _, c := range m.ToolCalls() {
			ids = append(ids, c.ID)
		}
		o := obj("role", "assistant", "stopReason", string(m.StopReason), "text", m.Text(), "toolCalls", ids)
		if m.ErrorMessage != "" {
			o = append(o, "errorMessage", m.ErrorMessage)
		}
		return o
	case providers.ToolResultMessage:
		return obj("role", "toolResult", "toolCallId", m.ToolCallID, "toolName", m.ToolName, "isError", m.IsError, "text", m.Text())
	}
	return obj("role", string(m.Role()))
}

// orderedJSON encodes v compactly, writing object keys in the order they
// have in template (the model's raw arguments) and any other keys after
// them, as JavaScript's JSON.stringify would for the reference's objects.
func orderedJSON(v any, template json.RawMessage) string {
	b, err := marshal(withOrder(v, keyOrder(template)))
	if err != nil {
		return ""
	}
	return string(b)
}

// keyTree is the key order of a JSON value's objects, by path.
type keyTree struct {
	keys []string
	sub  map[string]*keyTree
}

func keyOrder(raw json.RawMessage) *keyTree {
	if len(raw) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	t, _ := readTree(dec)
	return t
}

func readTree(dec *json.Decoder) (*keyTree, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil, nil
	}
	t := &keyTree{sub: map[string]*keyTree{}}
	i := 0
	for dec.More() {
		key := ""
		if d == '{' {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key, _ = k.(string)
			t.keys = append(t.keys, key)
		} else {
			key = itoa(i)
			i++
		}
		if t.sub[key], err = readTree(dec); err != nil {
			return nil, err
		}
	}
	_, err = dec.Token() // closing delimiter
	return t, err
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func withOrder(v any, t *keyTree) any {
	switch x := v.(type) {
	case map[string]any:
		var keys []string
		seen := map[string]bool{}
		if t != nil {
			for _, k := range t.keys {
				if _, ok := x[k]; ok && !seen[k] {
					keys = append(keys, k)
					seen[k] = true
				}
			}
		}
		var rest []string
		for k := range x {
			if !seen[k] {
				rest = append(rest, k)
			}
		}
		sort.Strings(rest)
		o := ordered{}
		for _, k := range append(keys, rest...) {
			var sub *keyTree
			if t != nil {
				sub = t.sub[k]
			}
			o = append(o, k, withOrder(x[k], sub))
		}
		return o
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			var sub *keyTree
			if t != nil {
				sub = t.sub[itoa(i)]
			}
			out[i] = withOrder(e, sub)
		}
		return out
	}
	return v
}
