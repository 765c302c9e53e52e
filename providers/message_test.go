package providers

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestMessageJSONRoundTrip(t *testing.T) {
	usage := Usage{Input: 10, Output: 5, CacheRead: 1, CacheWrite: 2, TotalTokens: 18, Cost: Cost{Input: 0.1, Total: 0.1}}
	msgs := []Message{
		UserMessage{Content: []Content{Text{Text: "hi"}, Image{Data: "aGk=", MIMEType: "image/png"}}, Timestamp: 1},
		AssistantMessage{Content: []Content{Thinking{Thinking: "t", Signature: "s", Redacted: true}, Text{Text: "a", Signature: "ts"},
			ToolCall{ID: "c1", Name: "read", Arguments: map[string]any{"p": "x", "n": 1.0}, RawArguments: `{"p":"x","n":1}`}},
			API: "openai", Provider: "openai", Model: "gpt", Usage: usage, StopReason: StopReasonToolUse, ErrorMessage: "", Timestamp: 2},
		AssistantMessage{StopReason: StopReasonError, ErrorMessage: "boom", Timestamp: 3},
		ToolResultMessage{ToolCallID: "c1", ToolName: "read", Content: []Content{Text{Text: "ok"}}, Details: map[string]any{"k": "v"},
			Usage: &usage, IsError: true, Timestamp: 4},
		RawMessage{RoleName: "notification", JSON: json.RawMessage(`{"role":"notification","text":"x"}`)},
	}
	for _, m := range msgs {
		raw, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		back, err := UnmarshalMessage(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if !reflect.DeepEqual(back, m) {
			t.Fatalf("round trip:\n%#v\n%#v", m, back)
		}
	}
}

// TestReferenceFieldNames decodes messages as the reference writes them.
func TestReferenceFieldNames(t *testing.T) {
	user, err := UnmarshalMessage([]byte(`{"role":"user","content":"plain text","timestamp":7}`))
	if err != nil || user.(UserMessage).Text() != "plain text" {
		t.Fatalf("string content: %v %v", user, err)
	}
	a, err := UnmarshalMessage([]byte(`{"role":"assistant","content":[{"type":"toolCall","id":"t1","name":"x","arguments":{"a":1}}],
		"api":"faux","provider":"faux","model":"faux","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,
		"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":0}`))
	if err != nil || a.(AssistantMessage).ToolCalls()[0].Arguments["a"] != 1.0 {
		t.Fatalf("assistant: %v %v", a, err)
	}
	raw, _ := json.Marshal(ToolResultMessage{ToolCallID: "t1", ToolName: "x"})
	for _, k := range []string{`"role":"toolResult"`, `"toolCallId":"t1"`, `"toolName":"x"`, `"content":[]`, `"isError":false`} {
		if !strings.Contains(string(raw), k) {
			t.Errorf("%s lacks %s", raw, k)
		}
	}
}

func TestUnmarshalMessageErrors(t *testing.T) {
	for _, in := range []string{``, `[]`, `{}`, `{"role":"user","content":[{"type":"video"}]}`, `{"role":"assistant","content":7}`} {
		if _, err := UnmarshalMessage([]byte(in)); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

func TestModelPriced(t *testing.T) {
	m := Model{Prices: Prices{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}}
	u := m.Priced(Usage{Input: 1_000_000, Output: 100_000, CacheRead: 2_000_000})
	want := Cost{Input: 3, Output: 1.5, CacheRead: 0.6, Total: 5.1}
	if u.TotalTokens != 3_100_000 || abs(u.Cost.Total-want.Total) > 1e-9 || abs(u.Cost.Output-1.5) > 1e-9 {
		t.Fatalf("priced %+v", u)
	}
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}
