package anthropic

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

// Events in the shapes of the recordings (sonnet4-parallel-tools-split-key,
// sonnet4-thinking-signature).
const (
	msgStart  = `{"type":"message_start","message":{"model":"claude-test","id":"msg_1","type":"message","role":"assistant","content":[],"stop_reason":null,"usage":{"input_tokens":50,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`
	textStart = `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
	blockStop = `{"type":"content_block_stop","index":0}`
	msgStop   = `{"type":"message_stop"}`
)

func textDelta(i int, text string) string {
	return fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%q}}`, i, text)
}

func stopWith(reason string, output int) string {
	return fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`, reason, output)
}

func answer(text string) string {
	return recorded.SSE(msgStart, textStart, textDelta(0, text), blockStop, stopWith("end_turn", 5), msgStop)
}

type pathArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// TestTruncatedCallThroughLoop: a response cut at max_tokens in the middle
// of a tool call's input (a shape no recording has: derived from
// sonnet4-parallel-tools-split-key, input split mid-string, stop
// max_tokens) reaches the loop as length; the body never runs; the next
// request carries the loop's refusal as the call's result, and the cut
// input as {}.
func TestTruncatedCallThroughLoop(t *testing.T) {
	cut := recorded.SSE(msgStart,
		`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_01","name":"write","input":{}}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"a.go\", \"con"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"tent\": \"hel"}}`,
		blockStop, stopWith("max_tokens", 20), msgStop)
	s := recorded.NewScript(t, recorded.Reply{Body: cut}, recorded.Reply{Body: answer("ok")})
	ran := false
	write := tools.Must(tools.New(tools.Config{Name: "write"}, func(context.Context, pathArgs) (string, error) {
		ran = true
		return "written", nil
	}))
	cfg := loop.Config{Provider: New(Options{APIKey: "k", BaseURL: s.URL}), Model: testModel}
	msgs, err := loop.Run(context.Background(), []providers.Message{providers.NewUserText("go")}, loop.Conversation{Tools: []*tools.Tool{write}}, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ran {
		t.Fatal("the body of a truncated call ran")
	}
	if a := msgs[1].(providers.AssistantMessage); a.StopReason != providers.StopReasonLength || !a.ToolCalls()[0].Incomplete {
		t.Fatalf("the cut response: %s, %+v", a.StopReason, a.ToolCalls())
	}
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	sent := reqs[1].Body["messages"].([]any)
	use := sent[1].(map[string]any)["content"].([]any)[0].(map[string]any)
	result := sent[2].(map[string]any)["content"].([]any)[0].(map[string]any)
	if use["type"] != "tool_use" || use["id"] != "toolu_01" || fmt.Sprint(use["input"]) != "map[]" {
		t.Fatalf("the cut call as sent back: %v", use)
	}
	text := result["content"].([]any)[0].(map[string]any)["text"].(string)
	if result["tool_use_id"] != "toolu_01" || result["is_error"] != true || !strings.Contains(text, "truncated") {
		t.Fatalf("the refusal as sent back: %v", result)
	}
}

// TestFailures: what the server says goes into the message, what arrived
// is kept, and every failure is stop reason error (shapes derived from
// sonnet4-thinking-signature; no recording has an error event, a refusal
// or a window overflow).
func TestFailures(t *testing.T) {
	tests := []struct {
		name  string
		reply recorded.Reply
		want  string
		text  string
	}{
		{"overloaded mid-stream", recorded.Reply{Body: recorded.SSE(msgStart, textStart, textDelta(0, "Hel")) +
			"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"},
			"overloaded_error: Overloaded", "Hel"},
		{"refusal", recorded.Reply{Body: recorded.SSE(msgStart, textStart, textDelta(0, "I can't"), blockStop, stopWith("refusal", 3), msgStop)},
			"declined", "I can't"},
		{"context window", recorded.Reply{Body: recorded.SSE(msgStart, textStart, textDelta(0, "a"), blockStop, stopWith("model_context_window_exceeded", 3), msgStop)},
			"context window", "a"},
		{"cut stream", recorded.Reply{Body: recorded.SSE(msgStart, textStart, textDelta(0, "half"))}, "ended before", "half"},
		{"HTTP 400", recorded.Reply{Status: 400, Body: `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too large"}}`},
			"HTTP 400: invalid_request_error: max_tokens: too large", ""},
		{"a line past MaxLineBytes", recorded.Reply{Body: recorded.SSE(msgStart, textStart, textDelta(0, strings.Repeat("x", 5000)))}, "MaxLineBytes", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := recorded.NewScript(t, tt.reply)
			p := New(Options{APIKey: "k", BaseURL: s.URL, HTTPOptions: providers.HTTPOptions{MaxRetries: -1, MaxLineBytes: 4096}})
			m := recorded.Collect(t, context.Background(), p, recorded.Hi(testModel))
			final := m[len(m)-1].Message
			if final.StopReason != providers.StopReasonError || !strings.Contains(final.ErrorMessage, tt.want) || final.Text() != tt.text {
				t.Fatalf("%s %q, text %q", final.StopReason, final.ErrorMessage, final.Text())
			}
		})
	}
}

// TestRetries: overloads and rate limits before the first event are
// retried, waiting as the server asks; the answer then streams.
func TestRetries(t *testing.T) {
	s := recorded.NewScript(t,
		recorded.Reply{Status: 529, Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
		recorded.Reply{Status: 429, Header: map[string]string{"retry-after-ms": "20"}, Body: `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`},
		recorded.Reply{Body: answer("fine")})
	p := New(Options{APIKey: "k", BaseURL: s.URL, HTTPOptions: providers.HTTPOptions{RetryBaseDelay: 1}})
	m := recorded.Collect(t, context.Background(), p, recorded.Hi(testModel))
	if final := m[len(m)-1].Message; final.StopReason != providers.StopReasonStop || final.Text() != "fine" || len(s.Requests()) != 3 {
		t.Fatalf("%s %q after %d requests", final.StopReason, final.ErrorMessage, len(s.Requests()))
	}
}

// TestCancelMidStream: cancelling ends the message as aborted at once,
// keeping what arrived.
func TestCancelMidStream(t *testing.T) {
	s := recorded.NewScript(t, recorded.Reply{Body: recorded.SSE(msgStart, textStart, textDelta(0, "so far")), Hold: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seq, _ := New(Options{APIKey: "k", BaseURL: s.URL}).Stream(ctx, &providers.Request{Model: testModel})
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

// TestKeyNeverLeaks: a server that echoes the key in an error body or an
// error event gets it into no message, event or error.
func TestKeyNeverLeaks(t *testing.T) {
	key := "sk-ant-api03-" + strings.Repeat("Zq9", 30)
	for _, reply := range []recorded.Reply{
		{Status: 401, Body: `{"type":"error","error":{"type":"authentication_error","message":"` + strings.Repeat("x", 280) + ` invalid x-api-key ` + key + `"}}`},
		{Body: recorded.SSE(msgStart) + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"bad key " + key + "\"}}\n\n"},
	} {
		s := recorded.NewScript(t, reply)
		evs := recorded.Collect(t, context.Background(), New(Options{APIKey: key, BaseURL: s.URL, HTTPOptions: providers.HTTPOptions{MaxRetries: -1}}), recorded.Hi(testModel))
		raw, _ := json.Marshal(evs)
		for i := 0; i+8 <= len(key); i++ {
			if strings.Contains(string(raw), key[i:i+8]) {
				t.Fatalf("the events carry part of the key: %s", evs[len(evs)-1].Message.ErrorMessage)
			}
		}
		if evs[len(evs)-1].Message.StopReason != providers.StopReasonError {
			t.Fatal("not an error")
		}
	}
}

// TestPauseTurnContinues: a paused turn (the recording
// sonnet45-pause-turn-web-search) is sent back, server blocks included, and
// the message goes on with the next response; usage is the sum.
func TestPauseTurnContinues(t *testing.T) {
	var pause []byte
	for _, rec := range recorded.NativeRecordings(t, "anthropic") {
		if rec.Name == "sonnet45-pause-turn-web-search" {
			pause = rec.Body
		}
	}
	s := recorded.NewScript(t, recorded.Reply{Body: string(pause)}, recorded.Reply{Body: answer(" And that is all.")})
	evs := recorded.Collect(t, context.Background(), New(Options{APIKey: "k", BaseURL: s.URL}), recorded.Hi(testModel))
	final := evs[len(evs)-1].Message
	reqs := s.Requests()
	if len(reqs) != 2 || final.StopReason != providers.StopReasonStop || !strings.HasSuffix(final.Text(), " And that is all.") {
		t.Fatalf("%d requests, %s, %q", len(reqs), final.StopReason, final.Text())
	}
	sent := reqs[1].Body["messages"].([]any)
	last := sent[len(sent)-1].(map[string]any)
	raw, _ := json.Marshal(last)
	if last["role"] != "assistant" || !strings.Contains(string(raw), `"server_tool_use"`) || !strings.Contains(string(raw), `"web_search_tool_result"`) {
		t.Fatalf("the paused turn was not sent back whole: %.300s", raw)
	}
	if final.Usage.Output <= 5 {
		t.Fatalf("usage not summed: %+v", final.Usage)
	}
}

// TestRequestShape: the request carries the system prompt, the tools and
// the latest turn with cache breakpoints; the model's own thinking goes
// back with its signature, another model's as text; an id the API would
// refuse is replaced the same way in the call and its result.
func TestRequestShape(t *testing.T) {
	s := recorded.NewScript(t, recorded.Reply{Body: answer("ok")})
	own := providers.AssistantMessage{API: API, Provider: "anthropic", Model: testModel.ID, StopReason: providers.StopReasonToolUse,
		Content: []providers.Content{
			providers.Thinking{Thinking: "let me see", Signature: "sig-1"},
			providers.Thinking{Redacted: true, Signature: "opaque-2"},
			providers.Text{Text: "Reading."},
			providers.ToolCall{ID: "call bad id!", Name: "read", Arguments: map[string]any{"path": "a"}}}}
	foreign := providers.AssistantMessage{API: "openai-responses", Provider: "openai", Model: "gpt-5", StopReason: providers.StopReasonStop,
		Content: []providers.Content{providers.Thinking{Thinking: "their reasoning", Signature: `{"id":"rs_1"}`}, providers.Text{Text: "Done.", Signature: "msg_1"}}}
	req := &providers.Request{Model: testModel, SystemPrompt: "be brief",
		Tools: []providers.ToolSpec{{Name: "read", Description: "Read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)}},
		Messages: []providers.Message{providers.NewUserText("go"), own,
			providers.ToolResultMessage{ToolCallID: "call bad id!", ToolName: "read", Content: []providers.Content{providers.Text{Text: "data"}}},
			foreign, providers.NewUserText("again")}}
	recorded.Collect(t, context.Background(), New(Options{APIKey: "k", BaseURL: s.URL}), req)
	body := s.Requests()[0].Body
	raw, _ := json.Marshal(body)
	js := string(raw)
	for _, want := range []string{
		`"system":[{"cache_control":{"type":"ephemeral"},"text":"be brief","type":"text"}]`,
		`"additionalProperties":false`,
		`{"signature":"sig-1","thinking":"let me see","type":"thinking"}`,
		`{"data":"opaque-2","type":"redacted_thinking"}`,
		`"id":"call_1_0"`, `"tool_use_id":"call_1_0"`,
		`{"text":"their reasoning","type":"text"}`,
		`{"cache_control":{"type":"ephemeral"},"text":"again","type":"text"}`,
	} {
		if !strings.Contains(js, want) {
			t.Errorf("the request lacks %s\n%s", want, js)
		}
	}
	if strings.Contains(js, "rs_1") || strings.Contains(js, "msg_1") {
		t.Errorf("another model's opaque data was sent: %s", js)
	}
	tools := body["tools"].([]any)
	if tools[0].(map[string]any)["cache_control"] == nil {
		t.Errorf("no cache breakpoint on the tools")
	}
	off := recorded.NewScript(t, recorded.Reply{Body: answer("ok")})
	recorded.Collect(t, context.Background(), New(Options{APIKey: "k", BaseURL: off.URL, DisableCache: true}), req)
	if raw, _ := json.Marshal(off.Requests()[0].Body); strings.Contains(string(raw), "cache_control") {
		t.Errorf("DisableCache still marks breakpoints")
	}
}
