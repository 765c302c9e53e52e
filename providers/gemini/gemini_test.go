package gemini

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

// chunk is one streamed response in the recordings' shape (data: JSON,
// CRLF CRLF).
func chunk(parts string, finish string, usage string) string {
	c := `{"candidates":[{"content":{"parts":[` + parts + `],"role":"model"},"index":0`
	if finish != "" {
		c += `,"finishReason":"` + finish + `"`
	}
	c += `}]`
	if usage != "" {
		c += `,"usageMetadata":` + usage
	}
	return "data: " + c + `,"modelVersion":"gemini-test"}` + "\r\n\r\n"
}

const usage = `{"promptTokenCount":40,"candidatesTokenCount":10,"totalTokenCount":50}`

type pathArgs struct {
	Path string `json:"path"`
}

// TestTruncatedCallThroughLoop: a response that ends at MAX_TOKENS with a
// call in it (derived from gemini20flash-max-tokens and
// gemini3pro-call-no-args) reaches the loop as length, the body never
// runs, and the next request answers the call with the loop's refusal.
func TestTruncatedCallThroughLoop(t *testing.T) {
	cut := chunk(`{"functionCall":{"id":"c1","name":"read","args":{"path":"a"}},"thoughtSignature":"c2lnbmVk"}`, "MAX_TOKENS", usage)
	s := recorded.NewScript(t, recorded.Reply{Body: cut}, recorded.Reply{Body: chunk(`{"text":"ok"}`, "STOP", usage)})
	ran := false
	read := tools.Must(tools.New(tools.Config{Name: "read"}, func(context.Context, pathArgs) (string, error) {
		ran = true
		return "data", nil
	}))
	cfg := loop.Config{Provider: newProvider(t, s.URL, Options{}), Model: testModel}
	msgs, err := loop.Run(context.Background(), []providers.Message{providers.NewUserText("go")}, loop.Conversation{Tools: []*tools.Tool{read}}, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a := msgs[1].(providers.AssistantMessage); ran || a.StopReason != providers.StopReasonLength {
		t.Fatalf("ran %v; the cut response %s", ran, a.StopReason)
	}
	contents := s.Requests()[1].Body["contents"].([]any)
	call := contents[1].(map[string]any)["parts"].([]any)[0].(map[string]any)
	resp := contents[2].(map[string]any)["parts"].([]any)[0].(map[string]any)["functionResponse"].(map[string]any)
	if call["thoughtSignature"] != "c2lnbmVk" || call["functionCall"].(map[string]any)["id"] != "c1" {
		t.Fatalf("the call as sent back: %v", call)
	}
	if resp["id"] != "c1" || !strings.Contains(fmt.Sprint(resp["response"]), "truncated") {
		t.Fatalf("the refusal as sent back: %v", resp)
	}
}

// TestFinishReasons: every finish that is not STOP or MAX_TOKENS ends the
// message as an error naming it, keeping what arrived (SAFETY, a streamed
// MALFORMED_FUNCTION_CALL and a blocked prompt have no recording: their
// shapes follow gemini20flash-max-tokens); cached tokens count as cache
// reads; a stream without a finish reason is an error.
func TestFinishReasons(t *testing.T) {
	tests := []struct {
		name, body, want, text string
		stop                   providers.StopReason
		cached                 int
	}{
		{"safety", chunk(`{"text":"Once upon"}`, "", "") + chunk(`{"text":""}`, "SAFETY", usage), "SAFETY", "Once upon", providers.StopReasonError, 0},
		{"malformed call", chunk(`{"text":"Let me call"}`, "", "") +
			"data: {\"candidates\":[{\"finishReason\":\"MALFORMED_FUNCTION_CALL\",\"finishMessage\":\"Malformed function call: print(default_api.read(\",\"index\":0}]}\r\n\r\n",
			"MALFORMED_FUNCTION_CALL", "Let me call", providers.StopReasonError, 0},
		{"blocked prompt", "data: {\"promptFeedback\":{\"blockReason\":\"PROHIBITED_CONTENT\"},\"usageMetadata\":{\"promptTokenCount\":9,\"totalTokenCount\":9}}\r\n\r\n",
			"blocked: PROHIBITED_CONTENT", "", providers.StopReasonError, 0},
		{"cut stream", chunk(`{"text":"half"}`, "", ""), "ended before", "half", providers.StopReasonError, 0},
		{"cached tokens", chunk(`{"text":"hi"}`, "STOP", `{"promptTokenCount":1000,"cachedContentTokenCount":800,"candidatesTokenCount":5,"totalTokenCount":1005}`),
			"", "hi", providers.StopReasonStop, 800},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := recorded.NewScript(t, recorded.Reply{Body: tt.body})
			evs := recorded.Collect(t, context.Background(), newProvider(t, s.URL, Options{}), recorded.Hi(testModel))
			m := evs[len(evs)-1].Message
			if m.StopReason != tt.stop || !strings.Contains(m.ErrorMessage, tt.want) || m.Text() != tt.text || m.Usage.CacheRead != tt.cached {
				t.Fatalf("%s %q, text %q, usage %+v", m.StopReason, m.ErrorMessage, m.Text(), m.Usage)
			}
			if tt.cached > 0 && m.Usage.Input != 200 {
				t.Fatalf("input %d, want the 200 tokens not cached", m.Usage.Input)
			}
		})
	}
}

// TestHTTPFailures: a refusal carries the server's message; a rate limit
// is retried after the delay the server asks for; a key echoed back never
// reaches the message.
func TestHTTPFailures(t *testing.T) {
	key := "AIzaSy" + strings.Repeat("Kq7", 11)
	s := recorded.NewScript(t,
		recorded.Reply{Status: 400, Body: `{"error":{"code":400,"message":"API key not valid: ` + strings.Repeat("x", 290) + key + `","status":"INVALID_ARGUMENT"}}`})
	evs := recorded.Collect(t, context.Background(), newProvider(t, s.URL, Options{APIKey: key}), recorded.Hi(testModel))
	m := evs[len(evs)-1].Message
	raw, _ := json.Marshal(evs)
	for i := 0; i+8 <= len(key); i++ {
		if strings.Contains(string(raw), key[i:i+8]) {
			t.Fatalf("the events carry part of the key: %q", m.ErrorMessage)
		}
	}
	if m.StopReason != providers.StopReasonError || !strings.Contains(m.ErrorMessage, "HTTP 400: INVALID_ARGUMENT: API key not valid") {
		t.Fatalf("%s %q", m.StopReason, m.ErrorMessage)
	}
	r := recorded.NewScript(t,
		recorded.Reply{Status: 429, Body: `{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"0.02s"}]}}`},
		recorded.Reply{Status: 503, Body: `{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}`},
		recorded.Reply{Body: chunk(`{"text":"fine"}`, "STOP", usage)})
	evs = recorded.Collect(t, context.Background(), newProvider(t, r.URL, Options{HTTPOptions: providers.HTTPOptions{MaxRetries: 3, RetryBaseDelay: 1}}), recorded.Hi(testModel))
	if m := evs[len(evs)-1].Message; m.Text() != "fine" || len(r.Requests()) != 3 {
		t.Fatalf("%q after %d requests: %q", m.Text(), len(r.Requests()), m.ErrorMessage)
	}
}

// TestCancelMidStream: cancelling ends the message as aborted, keeping
// what arrived.
func TestCancelMidStream(t *testing.T) {
	s := recorded.NewScript(t, recorded.Reply{Body: chunk(`{"text":"so far"}`, "", ""), Hold: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seq, _ := newProvider(t, s.URL, Options{}).Stream(ctx, &providers.Request{Model: testModel})
	var last providers.StreamEvent
	for e := range seq {
		if e.Type == providers.StreamTextDelta {
			cancel()
		}
		last = e
	}
	if last.Type != providers.StreamError || last.Message.StopReason != providers.StopReasonAborted || last.Message.Text() != "so far" {
		t.Fatalf("%s %s %q", last.Type, last.Message.StopReason, last.Message.Text())
	}
}

// TestRequestShape: the system instruction, the tools' JSON schemas, the
// model's own signatures on the parts they came with, another model's
// thinking as text without its signature, and a turn's results together.
func TestRequestShape(t *testing.T) {
	s := recorded.NewScript(t, recorded.Reply{Body: chunk(`{"text":"ok"}`, "STOP", usage)})
	own := providers.AssistantMessage{API: API, Provider: "google", Model: testModel.ID, StopReason: providers.StopReasonToolUse,
		Content: []providers.Content{providers.Text{Text: "Checking.", Signature: "dGV4dHNpZw=="},
			providers.ToolCall{ID: "a", Name: "read", Arguments: map[string]any{"path": "x"}, Signature: "Y2FsbHNpZw=="},
			providers.ToolCall{ID: "b", Name: "read", Arguments: map[string]any{"path": "y"}}}}
	foreign := providers.AssistantMessage{API: "anthropic-messages", Provider: "anthropic", Model: "claude", StopReason: providers.StopReasonStop,
		Content: []providers.Content{providers.Thinking{Thinking: "hmm", Signature: "anthropic-sig"}, providers.Text{Text: "Done."}}}
	req := &providers.Request{Model: testModel, SystemPrompt: "be brief",
		Tools: []providers.ToolSpec{{Name: "read", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}},
		Messages: []providers.Message{providers.NewUserText("go"), own,
			providers.ToolResultMessage{ToolCallID: "b", ToolName: "read", Content: []providers.Content{providers.Text{Text: "B"}}},
			providers.ToolResultMessage{ToolCallID: "a", ToolName: "read", Content: []providers.Content{providers.Text{Text: "A"}}},
			foreign, providers.NewUserText("again")}}
	recorded.Collect(t, context.Background(), newProvider(t, s.URL, Options{}), req)
	raw, _ := json.Marshal(s.Requests()[0].Body)
	js := string(raw)
	for _, want := range []string{
		`"systemInstruction":{"parts":[{"text":"be brief"}]`,
		`"parametersJsonSchema":{"properties":{"path":{"type":"string"}},"type":"object"}`,
		`{"text":"Checking.","thoughtSignature":"dGV4dHNpZw=="}`,
		`"thoughtSignature":"Y2FsbHNpZw=="`,
		`{"functionResponse":{"id":"a","name":"read","response":{"output":"A"}}},{"functionResponse":{"id":"b","name":"read","response":{"output":"B"}}}`,
		`{"parts":[{"text":"hmm"},{"text":"Done."}],"role":"model"}`,
	} {
		if !strings.Contains(js, want) {
			t.Errorf("the request lacks %s\n%s", want, js)
		}
	}
	if strings.Contains(js, "anthropic-sig") {
		t.Errorf("another model's signature was sent")
	}
}
