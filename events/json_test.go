package events

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/kit"
	"github.com/agentloop/agentloop/tools"
)

func sampleEvents() []Event {
	asst := providers.AssistantMessage{
		Content: []providers.Content{providers.Thinking{Thinking: "hm", Signature: "sig"}, providers.Text{Text: "hi"},
			providers.ToolCall{ID: "c1", Name: "read", Arguments: map[string]any{"path": "a"}}},
		API: "faux", Provider: "faux", Model: "m", StopReason: providers.StopReasonToolUse, Timestamp: 5,
		Usage: providers.Usage{Input: 1, Output: 2, TotalTokens: 3},
	}
	res := providers.ToolResultMessage{ToolCallID: "c1", ToolName: "read", Content: []providers.Content{providers.Text{Text: "ok"}},
		Details: map[string]any{"n": 1.0}, IsError: false, Timestamp: 6}
	user := providers.UserMessage{Content: []providers.Content{providers.Text{Text: "go"}, providers.Image{Data: "aGk=", MIMEType: "image/png"}}, Timestamp: 4}
	b := kit.NewBuilder(providers.Model{ID: "m", API: "faux", Provider: "faux"})
	b.Start()
	b.TextStart()
	delta := b.TextDelta("hel")
	result := tools.Result{Content: []providers.Content{providers.Text{Text: "done"}}, Details: map[string]any{"k": "v"}}
	return []Event{
		AgentStart{}, TurnStart{},
		MessageStart{Message: user}, MessageEnd{Message: asst},
		MessageUpdate{Stream: delta},
		ToolExecutionStart{ToolCallID: "c1", ToolName: "read", Args: map[string]any{"path": "a"}},
		ToolExecutionUpdate{ToolCallID: "c1", ToolName: "read", Args: map[string]any{"path": "a"}, Partial: result},
		ToolExecutionEnd{ToolCallID: "c1", ToolName: "read", Result: result, IsError: true},
		TurnEnd{Message: asst, ToolResults: []providers.ToolResultMessage{res}},
		AgentEnd{Messages: []providers.Message{user, asst, res}},
		ToolsChanged{Tools: []string{"read", "mine"}, Added: []string{"read"}, Removed: []string{"old"}, Hidden: []string{"mine"}},
		ToolsChanged{Tools: []string{"read"}, Hidden: []string{}},
	}
}

func TestEventJSONRoundTrip(t *testing.T) {
	for _, e := range sampleEvents() {
		t.Run(string(e.Type()), func(t *testing.T) {
			raw, err := Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			var head struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(raw, &head); head.Type != string(e.Type()) {
				t.Fatalf("type %q in %s", head.Type, raw)
			}
			back, err := Unmarshal(raw)
			if err != nil {
				t.Fatalf("%s: %v", raw, err)
			}
			again, _ := Marshal(back)
			if string(again) != string(raw) {
				t.Fatalf("round trip changed the event:\n%s\n%s", raw, again)
			}
			if u, ok := e.(MessageUpdate); ok {
				if got := back.(MessageUpdate).Stream.Partial().Text(); got != u.Stream.Partial().Text() {
					t.Fatalf("partial text %q", got)
				}
			}
		})
	}
}

func TestEventJSONFieldNames(t *testing.T) {
	raw, _ := Marshal(ToolExecutionEnd{ToolCallID: "c1", ToolName: "t", Result: tools.TextResult("x")})
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	for _, k := range []string{"type", "toolCallId", "toolName", "result", "isError"} {
		if _, ok := m[k]; !ok {
			t.Errorf("tool_execution_end lacks %q: %s", k, raw)
		}
	}
	raw, _ = Marshal(AgentEnd{})
	if !reflect.DeepEqual(string(raw), `{"type":"agent_end","messages":[]}`) {
		t.Errorf("empty agent_end %s", raw)
	}
}

func TestUnmarshalRejectsBadInput(t *testing.T) {
	for _, in := range []string{``, `{`, `[]`, `{"type":"nope"}`, `{"type":"message_end"}`, `{"type":"message_update"}`,
		`{"type":"agent_end","messages":[{"role":"user","content":5}]}`} {
		if _, err := Unmarshal([]byte(in)); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

// FuzzUnmarshal: decoding arbitrary bytes never panics, and whatever
// decodes survives a round trip: encoding it and decoding that gives an
// event that encodes to the same bytes.
func FuzzUnmarshal(f *testing.F) {
	for _, e := range sampleEvents() {
		raw, _ := Marshal(e)
		f.Add(raw)
		wire, _ := MarshalWire(WithEnvelope(e, Envelope{Seq: Seq{N: 3, Sub: 2}, Path: []string{"c1"}, Attempt: 1}))
		f.Add(wire)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := Unmarshal(data)
		if err != nil {
			return
		}
		// The wire form keeps the envelope.
		wire, err := MarshalWire(e)
		if err != nil {
			t.Fatalf("decoded event does not encode for the wire: %v", err)
		}
		if w, err := Unmarshal(wire); err != nil || !reflect.DeepEqual(EnvelopeOf(w), EnvelopeOf(e)) {
			t.Fatalf("the wire form lost the envelope (%v):\n%s\n%s", err, data, wire)
		}
		first, err := Marshal(e)
		if err != nil {
			t.Fatalf("decoded event does not encode: %v", err)
		}
		back, err := Unmarshal(first)
		if err != nil {
			t.Fatalf("encoded event does not decode: %v\n%s", err, first)
		}
		if back.Type() != e.Type() {
			t.Fatalf("type %s became %s", e.Type(), back.Type())
		}
		second, err := Marshal(back)
		if err != nil || !bytes.Equal(first, second) {
			t.Fatalf("round trip changed the event (%v):\n%s\n%s", err, first, second)
		}
	})
}

// TestMarshalWire: the wire form carries a message_update's change only,
// with the version, and decodes back to the same change; the other events
// are Marshal's with the version.
func TestMarshalWire(t *testing.T) {
	b := kit.NewBuilder(providers.Model{ID: "m"})
	b.Start()
	b.TextStart()
	b.TextDelta(strings.Repeat("long text ", 100))
	delta := b.TextDelta("more")
	raw, err := MarshalWire(MessageUpdate{Stream: delta})
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > 200 || !strings.Contains(string(raw), `"v":2`) || strings.Contains(string(raw), "long text") {
		t.Fatalf("wire message_update carries more than its change: %s", raw)
	}
	back, err := Unmarshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	got := back.(MessageUpdate).Stream
	if got.Type != providers.StreamTextDelta || got.Delta != "more" || got.ContentIndex != delta.ContentIndex || got.Message != nil {
		t.Fatalf("decoded %+v", got)
	}
	start := b.ToolCallStart("c1", "read")
	raw, _ = MarshalWire(MessageUpdate{Stream: start})
	if back, err := Unmarshal(raw); err != nil || back.(MessageUpdate).Stream.ToolCall.Name != "read" || back.(MessageUpdate).Stream.ToolCall.ID != "c1" {
		t.Fatalf("toolcall_start: %s %v", raw, err)
	}
	for _, e := range sampleEvents() {
		raw, err := MarshalWire(e)
		if err != nil || !strings.Contains(string(raw), `"v":2`) {
			t.Fatalf("%s: %s %v", e.Type(), raw, err)
		}
		if _, err := Unmarshal(raw); err != nil {
			t.Fatalf("%s: %v", e.Type(), err)
		}
	}
}

// TestAssemblerRebuildsFromTheWire: the events of a streamed message, sent
// in the wire form and read back, rebuild the message in flight: the same
// text, thinking and tool calls as the in-process snapshots.
func TestAssemblerRebuildsFromTheWire(t *testing.T) {
	b := kit.NewBuilder(providers.Model{ID: "m", Provider: "p"})
	var evs []providers.StreamEvent
	add := func(e providers.StreamEvent) { evs = append(evs, e) }
	start := b.Start()
	add(b.ThinkingDelta("let me "))
	add(b.ThinkingDelta("think"))
	add(b.ThinkingEnd("sig"))
	add(b.TextStart())
	add(b.TextDelta("Hel"))
	add(b.TextDelta("lo"))
	add(b.TextEnd())
	call := b.ToolCallStart("c1", "read")
	add(call)
	add(b.ToolCallDeltaAt(call.ContentIndex, `{"path":`, nil))
	add(b.ToolCallDeltaAt(call.ContentIndex, `"a.go"}`, nil))
	add(b.ToolCallEndAt(call.ContentIndex, map[string]any{"path": "a.go"}, true))

	var a Assembler
	if a.Message() != nil {
		t.Fatal("a message before message_start")
	}
	a.Add(MessageStart{Message: *start.Message})
	for _, ev := range evs {
		raw, err := MarshalWire(MessageUpdate{Stream: ev})
		if err != nil {
			t.Fatal(err)
		}
		back, err := Unmarshal(raw)
		if err != nil {
			t.Fatal(err)
		}
		a.Add(back)
		got, want := a.Message(), ev.Partial()
		if len(got.Content) != len(want.Content) || got.Text() != want.Text() {
			t.Fatalf("after %s: %+v, want %+v", ev.Type, got.Content, want.Content)
		}
	}
	got := a.Message()
	if th := got.Content[0].(providers.Thinking); th.Thinking != "let me think" {
		t.Fatalf("thinking %q", th.Thinking)
	}
	tc := got.Content[2].(providers.ToolCall)
	if tc.ID != "c1" || tc.Name != "read" || tc.RawArguments != `{"path":"a.go"}` || tc.Arguments["path"] != "a.go" || tc.Incomplete {
		t.Fatalf("tool call %+v", tc)
	}
	a.Add(MessageEnd{Message: *got})
	if a.Message() != nil {
		t.Fatal("a message after message_end")
	}
}

// TestToolsChangedHiddenNone: an empty Hidden (none hidden any more)
// survives the wire apart from an absent one.
func TestToolsChangedHiddenNone(t *testing.T) {
	for _, tc := range []struct {
		e    ToolsChanged
		wire string
	}{
		{ToolsChanged{Tools: []string{"a"}, Hidden: []string{}}, `{"type":"tools_changed","tools":["a"],"hidden":[]}`},
		{ToolsChanged{Tools: []string{"a"}, Added: []string{"a"}}, `{"type":"tools_changed","tools":["a"],"added":["a"]}`},
	} {
		raw, err := Marshal(tc.e)
		if err != nil || string(raw) != tc.wire {
			t.Fatalf("%s %v, want %s", raw, err, tc.wire)
		}
		back, err := Unmarshal(raw)
		if err != nil || (back.(ToolsChanged).Hidden == nil) != (tc.e.Hidden == nil) {
			t.Fatalf("%#v %v", back, err)
		}
	}
}
