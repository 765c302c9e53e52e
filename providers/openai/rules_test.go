package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"testing"

	"github.com/agentloop/agentloop/providers"
)

var validToolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// chatRules checks a request body against the rules Chat Completions
// servers enforce on the messages: every message has content (tool calls
// may stand in for an assistant's, and an assistant's is not empty); tool calls have unique non-empty ids,
// valid names and JSON arguments, and are all answered by tool messages
// right after their assistant message; a tool message answers a call of
// that message and nothing else.
func chatRules(body map[string]any) error {
	msgs, _ := body["messages"].([]any)
	seen := map[string]bool{}
	for i := 0; i < len(msgs); i++ {
		m, _ := msgs[i].(map[string]any)
		role, _ := m["role"].(string)
		_, hasContent := m["content"]
		calls, _ := m["tool_calls"].([]any)
		if !hasContent && !(role == "assistant" && len(calls) > 0) {
			return fmt.Errorf("message %d (%s) has no content", i, role)
		}
		switch role {
		case "assistant":
			if text, _ := m["content"].(string); text == "" && len(calls) == 0 {
				return fmt.Errorf("message %d: an empty assistant message", i)
			}
			want := map[string]bool{}
			for _, c := range calls {
				c, _ := c.(map[string]any)
				id, _ := c["id"].(string)
				fn, _ := c["function"].(map[string]any)
				name, _ := fn["name"].(string)
				args, _ := fn["arguments"].(string)
				switch {
				case id == "" || seen[id]:
					return fmt.Errorf("message %d: tool call id %q is empty or used before", i, id)
				case !validToolName.MatchString(name):
					return fmt.Errorf("message %d: tool name %q", i, name)
				case !json.Valid([]byte(args)):
					return fmt.Errorf("message %d: arguments %q", i, args)
				}
				seen[id], want[id] = true, true
			}
			for len(want) > 0 {
				i++
				if i >= len(msgs) {
					return fmt.Errorf("tool calls %v not answered", want)
				}
				t, _ := msgs[i].(map[string]any)
				id, _ := t["tool_call_id"].(string)
				if t["role"] != "tool" || !want[id] {
					return fmt.Errorf("message %d (%v %q): tool calls %v not answered first", i, t["role"], id, want)
				}
				delete(want, id)
			}
		case "tool":
			return fmt.Errorf("message %d: tool message %v answers no call", i, m["tool_call_id"])
		case "user", "system":
		default:
			return fmt.Errorf("message %d: role %q", i, role)
		}
	}
	return nil
}

// TestHostileTranscriptsAreSendable loads transcripts a server would
// refuse as they stand (results after user messages, results without ids,
// calls without ids or names, duplicate ids, bad names, empty texts) and
// continues from them against a server that enforces the rules: every
// request is accepted, and the loaded messages are all still there.
func TestHostileTranscriptsAreSendable(t *testing.T) {
	call := func(id, name string) providers.ToolCall {
		return providers.ToolCall{ID: id, Name: name, Arguments: map[string]any{"path": "a"}}
	}
	result := func(id, name, text string) providers.ToolResultMessage {
		return providers.ToolResultMessage{ToolCallID: id, ToolName: name, Content: []providers.Content{providers.Text{Text: text}}}
	}
	asst := func(blocks ...providers.Content) providers.AssistantMessage {
		return providers.AssistantMessage{Content: blocks, StopReason: providers.StopReasonToolUse}
	}
	for _, tc := range []struct {
		name string
		msgs []providers.Message
	}{
		{"results after user messages", []providers.Message{providers.NewUserText("go"), asst(call("n1", "read")),
			providers.NewUserText("a"), providers.NewUserText("b"), providers.NewUserText("c"), result("n1", "read", "late")}},
		{"a result without an id", []providers.Message{providers.NewUserText("go"), asst(call("n1", "read")), result("", "read", "?")}},
		{"a call without id or name", []providers.Message{providers.NewUserText("go"), asst(call("", "")), result("", "", "?")}},
		{"duplicate ids", []providers.Message{providers.NewUserText("go"), asst(call("d", "read"), call("d", "read")),
			result("d", "read", "one"), result("d", "read", "two"), asst(call("d", "read")), result("d", "read", "three")}},
		{"a bad name", []providers.Message{providers.NewUserText("go"), asst(call("b1", "bad name!")), result("b1", "bad name!", "x")}},
		{"empty texts", []providers.Message{providers.NewUserText(""), asst(call("e1", "read")), result("e1", "read", "")}},
		{"an orphan result first", []providers.Message{result("o1", "read", "stray"), providers.NewUserText("go")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, reply{fixture: "done-text.sse"})
			var refused error
			s.check = func(_ int, body map[string]any) { refused = chatRules(body) }
			req := &providers.Request{Messages: append(tc.msgs, providers.NewUserText("continue"))}
			m := final(stream(t, context.Background(), s.provider(Options{}), req))
			if refused != nil {
				t.Fatalf("a server would refuse the request: %v", refused)
			}
			if m.StopReason != providers.StopReasonStop {
				t.Fatalf("%s: %s", m.StopReason, m.ErrorMessage)
			}
		})
	}
	// And the rules checker refuses what it should.
	for _, bad := range []string{
		`{"messages":[{"role":"user"}]}`,
		`{"messages":[{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"x","arguments":"{}"}}]},{"role":"user","content":"u"},{"role":"tool","tool_call_id":"a","content":"r"}]}`,
		`{"messages":[{"role":"assistant","tool_calls":[{"id":"","function":{"name":"x","arguments":"{}"}}]}]}`,
		`{"messages":[{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"bad name","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":""}]}`,
		`{"messages":[{"role":"tool","tool_call_id":"z","content":""}]}`,
	} {
		var body map[string]any
		if err := json.Unmarshal([]byte(bad), &body); err != nil {
			t.Fatal(err)
		}
		if chatRules(body) == nil {
			t.Errorf("the rules accepted %s", bad)
		}
	}
}
