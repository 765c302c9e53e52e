package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/internal/harness/recorded"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/tools"
)

// Events in the shapes of gpt5-summary-encrypted-then-call.
const (
	rCreated   = `{"type":"response.created","response":{"id":"resp_1","status":"in_progress","output":[]}}`
	rReasoning = `{"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}`
	rSummary   = `{"type":"response.reasoning_summary_text.delta","item_id":"rs_1","output_index":0,"summary_index":0,"delta":"Thinking."}`
	rReasoned  = `{"type":"response.output_item.done","output_index":0,"item":{"id":"rs_1","type":"reasoning","encrypted_content":"gAAAA-secret","summary":[{"type":"summary_text","text":"Thinking."}]}}`
	rCall      = `{"type":"response.output_item.added","output_index":1,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_1","name":"write"}}`
	rUsage     = `"usage":{"input_tokens":100,"input_tokens_details":{"cached_tokens":0},"output_tokens":50,"output_tokens_details":{"reasoning_tokens":20},"total_tokens":150}`
)

func argsDelta(d string) string {
	return fmt.Sprintf(`{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":1,"delta":%q}`, d)
}

func responsesAnswer(text string) string {
	return recorded.SSE(rCreated,
		`{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_9","type":"message","role":"assistant","content":[]}}`,
		fmt.Sprintf(`{"type":"response.output_text.delta","item_id":"msg_9","output_index":0,"content_index":0,"delta":%q}`, text),
		`{"type":"response.output_item.done","output_index":0,"item":{"id":"msg_9","type":"message","role":"assistant","phase":"final_answer","content":[]}}`,
		`{"type":"response.completed","response":{"id":"resp_2","status":"completed",`+rUsage+`}}`)
}

// TestResponsesTruncatedCallThroughLoop: a response left incomplete at
// max_output_tokens in the middle of a call's arguments (no recording has
// one; derived from gpt5-summary-encrypted-then-call) reaches the loop as
// length, the body never runs, and the next request carries the
// reasoning item whole, the call with its item id, and the refusal.
func TestResponsesTruncatedCallThroughLoop(t *testing.T) {
	cut := recorded.SSE(rCreated, rReasoning, rSummary, rReasoned, rCall, argsDelta(`{"path":"a.go","content":"hel`),
		`{"type":"response.incomplete","response":{"id":"resp_1","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},`+rUsage+`}}`)
	s := recorded.NewScript(t, recorded.Reply{Body: cut}, recorded.Reply{Body: responsesAnswer("ok")})
	ran := false
	write := tools.Must(tools.New(tools.Config{Name: "write"}, func(context.Context, pathArgs) (string, error) {
		ran = true
		return "written", nil
	}))
	cfg := loop.Config{Provider: NewResponses(Options{APIKey: "k", BaseURL: s.URL}), Model: responsesModel}
	msgs, err := loop.Run(context.Background(), []providers.Message{providers.NewUserText("go")}, loop.Conversation{Tools: []*tools.Tool{write}}, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a := msgs[1].(providers.AssistantMessage); ran || a.StopReason != providers.StopReasonLength || !a.ToolCalls()[0].Incomplete {
		t.Fatalf("ran %v; the cut response %s %+v", ran, a.StopReason, a.ToolCalls())
	}
	input, _ := json.Marshal(s.Requests()[1].Body["input"])
	js := string(input)
	for _, want := range []string{
		`"encrypted_content":"gAAAA-secret"`, `"id":"rs_1"`,
		`{"arguments":"{}","call_id":"call_1","id":"fc_1","name":"write","type":"function_call"}`,
		`"call_id":"call_1","output":"`, `truncated`,
	} {
		if !strings.Contains(js, want) {
			t.Errorf("the follow-up input lacks %s\n%s", want, js)
		}
	}
	if body := s.Requests()[0].Body; body["store"] != false || !strings.Contains(fmt.Sprint(body["include"]), "reasoning.encrypted_content") {
		t.Errorf("not a stateless request: store %v include %v", body["store"], body["include"])
	}
}

// TestResponsesFailures: a failed response, an incomplete one for a reason
// other than length, and a stream without a terminal event end as errors
// with what the server said, keeping what arrived.
func TestResponsesFailures(t *testing.T) {
	text := `{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}` + "\n"
	delta := `{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"partial"}`
	tests := []struct{ name, body, want string }{
		{"failed", recorded.SSE(rCreated, strings.TrimSpace(text), delta,
			`{"type":"response.failed","response":{"id":"resp_1","status":"failed","error":{"code":"server_error","message":"The model crashed."}}}`), "server_error: The model crashed."},
		{"content filter", recorded.SSE(rCreated, strings.TrimSpace(text), delta,
			`{"type":"response.incomplete","response":{"id":"resp_1","status":"incomplete","incomplete_details":{"reason":"content_filter"}}}`), "incomplete: content_filter"},
		{"no terminal event", recorded.SSE(rCreated, strings.TrimSpace(text), delta), "ended before"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := recorded.NewScript(t, recorded.Reply{Body: tt.body})
			evs := recorded.Collect(t, context.Background(), NewResponses(Options{APIKey: "k", BaseURL: s.URL}), recorded.Hi(responsesModel))
			m := evs[len(evs)-1].Message
			if m.StopReason != providers.StopReasonError || !strings.Contains(m.ErrorMessage, tt.want) || m.Text() != "partial" {
				t.Fatalf("%s %q text %q", m.StopReason, m.ErrorMessage, m.Text())
			}
		})
	}
}

// TestResponsesRequestShape: instructions, tools, the model's own items
// (reasoning whole, message id and phase, call item id) and another
// model's content without its opaque data.
func TestResponsesRequestShape(t *testing.T) {
	s := recorded.NewScript(t, recorded.Reply{Body: responsesAnswer("ok")})
	reasoning := `{"id":"rs_7","type":"reasoning","encrypted_content":"enc","summary":[]}`
	own := providers.AssistantMessage{API: ResponsesAPI, Provider: "openai", Model: responsesModel.ID, StopReason: providers.StopReasonToolUse,
		Content: []providers.Content{providers.Thinking{Signature: reasoning},
			providers.Text{Text: "Looking.", Signature: `{"id":"msg_7","phase":"commentary"}`},
			providers.ToolCall{ID: "call_7", Name: "read", Arguments: map[string]any{"path": "a"}, Signature: "fc_7"}}}
	foreign := providers.AssistantMessage{API: "anthropic-messages", Provider: "anthropic", Model: "claude", StopReason: providers.StopReasonStop,
		Content: []providers.Content{providers.Thinking{Thinking: "hmm", Signature: "anthropic-sig"}, providers.Text{Text: "Done."}}}
	req := &providers.Request{Model: responsesModel, SystemPrompt: "be brief",
		Tools: []providers.ToolSpec{{Name: "read", Parameters: json.RawMessage(`{"type":"object"}`)}},
		Messages: []providers.Message{providers.NewUserText("go"), own,
			providers.ToolResultMessage{ToolCallID: "call_7", ToolName: "read", Content: []providers.Content{providers.Text{Text: "A"}}},
			foreign, providers.NewUserText("again")}}
	recorded.Collect(t, context.Background(), NewResponses(Options{APIKey: "k", BaseURL: s.URL}), req)
	raw, _ := json.Marshal(s.Requests()[0].Body)
	js := string(raw)
	for _, want := range []string{
		`"instructions":"be brief"`, `{"name":"read","parameters":{"type":"object"},"strict":false,"type":"function"}`,
		`{"encrypted_content":"enc","id":"rs_7","summary":[],"type":"reasoning"}`,
		`{"content":[{"text":"Looking.","type":"output_text"}],"id":"msg_7","phase":"commentary","role":"assistant","type":"message"}`,
		`{"arguments":"{\"path\":\"a\"}","call_id":"call_7","id":"fc_7","name":"read","type":"function_call"}`,
		`{"call_id":"call_7","output":"A","type":"function_call_output"}`,
		`{"content":[{"text":"hmm","type":"output_text"}],"role":"assistant","type":"message"}`,
	} {
		if !strings.Contains(js, want) {
			t.Errorf("the request lacks %s\n%s", want, js)
		}
	}
	if strings.Contains(js, "anthropic-sig") {
		t.Errorf("another model's signature was sent")
	}
}

// TestResponsesCancelAndKey: cancelling ends the message as aborted,
// keeping what arrived; a server that echoes the key in an error event
// gets it into no event.
func TestResponsesCancelAndKey(t *testing.T) {
	partial := recorded.SSE(rCreated,
		`{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}`,
		`{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"so far"}`)
	s := recorded.NewScript(t, recorded.Reply{Body: partial, Hold: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seq, _ := NewResponses(Options{APIKey: "k", BaseURL: s.URL}).Stream(ctx, &providers.Request{Model: responsesModel})
	var last providers.StreamEvent
	for e := range seq {
		if e.Type == providers.StreamTextDelta {
			cancel()
		}
		last = e
	}
	if last.Message.StopReason != providers.StopReasonAborted || last.Message.Text() != "so far" {
		t.Fatalf("%s %q", last.Message.StopReason, last.Message.Text())
	}
	key := "sk-proj-" + strings.Repeat("Ab3", 20)
	leak := recorded.NewScript(t, recorded.Reply{Body: recorded.SSE(rCreated,
		`{"type":"error","error":{"code":"invalid_api_key","message":"Incorrect API key provided: `+key+`"}}`)})
	evs := recorded.Collect(t, context.Background(), NewResponses(Options{APIKey: key, BaseURL: leak.URL}), recorded.Hi(responsesModel))
	raw, _ := json.Marshal(evs)
	for i := 0; i+8 <= len(key); i++ {
		if strings.Contains(string(raw), key[i:i+8]) {
			t.Fatalf("the events carry part of the key: %q", evs[len(evs)-1].Message.ErrorMessage)
		}
	}
	if m := evs[len(evs)-1].Message; m.StopReason != providers.StopReasonError || !strings.Contains(m.ErrorMessage, "invalid_api_key") {
		t.Fatalf("%s %q", m.StopReason, m.ErrorMessage)
	}
}
