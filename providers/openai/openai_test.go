package openai

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/providers"
)

func TestTextStream(t *testing.T) {
	s := newServer(t, reply{fixture: "text.sse"})
	evs := stream(t, context.Background(), s.provider(Options{}), &providers.Request{SystemPrompt: "be brief",
		Messages: []providers.Message{providers.NewUserText("hi")},
		Tools:    []providers.ToolSpec{{Name: "read", Description: "Read a file", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}})
	m := final(evs)
	if evs[0].Type != providers.StreamStart || evs[len(evs)-1].Type != providers.StreamDone {
		t.Fatalf("first %s last %s", evs[0].Type, evs[len(evs)-1].Type)
	}
	if m.Text() != "Hello, world" || m.StopReason != providers.StopReasonStop {
		t.Fatalf("message %q %s", m.Text(), m.StopReason)
	}
	if m.Usage.Input != 100 || m.Usage.CacheRead != 20 || m.Usage.Output != 30 || m.Usage.TotalTokens != 150 {
		t.Fatalf("usage %+v", m.Usage)
	}
	if want := (100*1.0 + 30*2.0 + 20*0.5) / 1e6; m.Usage.Cost.Total != want {
		t.Fatalf("cost %v, want %v", m.Usage.Cost.Total, want)
	}
	body := s.requests()[0]
	msgs := body["messages"].([]any)
	if msgs[0].(map[string]any)["role"] != "system" || msgs[1].(map[string]any)["content"] != "hi" || body["stream"] != true {
		t.Fatalf("request %v", body)
	}
	if so := body["stream_options"].(map[string]any); so["include_usage"] != true {
		t.Fatal("usage not requested")
	}
	fn := body["tools"].([]any)[0].(map[string]any)["function"].(map[string]any)
	if fn["name"] != "read" || fn["parameters"].(map[string]any)["type"] != "object" {
		t.Fatalf("tools %v", body["tools"])
	}
	if s.auth[0] != "Bearer sk-test" {
		t.Fatalf("auth %q", s.auth[0])
	}
}

func TestReasoningBecomesThinking(t *testing.T) {
	s := newServer(t, reply{fixture: "reasoning.sse"})
	m := final(stream(t, context.Background(), s.provider(Options{}), nil))
	th, ok := m.Content[0].(providers.Thinking)
	if !ok || th.Thinking != "Let me think." || m.Text() != "42" {
		t.Fatalf("content %#v", m.Content)
	}
}

// TestInterleavedToolCalls: text, then two calls whose fragments alternate
// by index; each call is assembled from its own fragments.
func TestInterleavedToolCalls(t *testing.T) {
	s := newServer(t, reply{fixture: "tools-interleaved.sse"})
	evs := stream(t, context.Background(), s.provider(Options{}), nil)
	m := final(evs)
	calls := m.ToolCalls()
	if m.Text() != "Let me check." || len(calls) != 2 || m.StopReason != providers.StopReasonToolUse {
		t.Fatalf("message %+v", m)
	}
	if calls[0].ID != "call_a" || calls[0].Name != "read" || !reflect.DeepEqual(calls[0].Arguments, map[string]any{"path": "a.go"}) || calls[0].Incomplete {
		t.Fatalf("call a %+v", calls[0])
	}
	if calls[1].ID != "call_b" || calls[1].Name != "list" || !reflect.DeepEqual(calls[1].Arguments, map[string]any{"dir": "src"}) {
		t.Fatalf("call b %+v", calls[1])
	}
	var deltas []int
	for _, e := range evs {
		if e.Type == providers.StreamToolCallDelta {
			deltas = append(deltas, e.ContentIndex)
		}
	}
	if !reflect.DeepEqual(deltas, []int{2, 1, 2, 1, 2}) {
		t.Fatalf("delta indexes %v", deltas)
	}
}

// TestSplitArguments: argument fragments split mid-token, written to the
// wire in 7-byte pieces that split UTF-8 characters.
func TestSplitArguments(t *testing.T) {
	s := newServer(t, reply{fixture: "split-args.sse", piece: 7})
	evs := stream(t, context.Background(), s.provider(Options{}), nil)
	call := final(evs).ToolCalls()[0]
	if !reflect.DeepEqual(call.Arguments, map[string]any{"city": "Zürich", "days": 3.0}) || call.Incomplete {
		t.Fatalf("call %+v", call)
	}
	if call.RawArguments != `{"city":"Zürich","days":3}` {
		t.Fatalf("raw %q", call.RawArguments)
	}
	var previews int
	for _, e := range evs {
		if e.Type == providers.StreamToolCallDelta && len(e.Partial().ToolCalls()[0].Arguments) > 0 {
			previews++
		}
	}
	if previews == 0 {
		t.Fatal("no delta carried a preview of the arguments")
	}
}

func TestCutToolCallIsIncomplete(t *testing.T) {
	for _, fx := range []string{"length-mid-args.sse", "claims-tool-calls-but-cut.sse"} {
		s := newServer(t, reply{fixture: fx})
		m := final(stream(t, context.Background(), s.provider(Options{}), nil))
		c := m.ToolCalls()[0]
		if !c.Incomplete || c.Arguments["path"] != "a.txt" {
			t.Fatalf("%s: call %+v", fx, c)
		}
		if fx == "length-mid-args.sse" && m.StopReason != providers.StopReasonLength {
			t.Fatalf("stop reason %s", m.StopReason)
		}
	}
}

func TestFailures(t *testing.T) {
	tests := []struct {
		name   string
		reply  reply
		reason providers.StopReason
		text   string // expected in the error message
		kept   string // streamed text that must survive
	}{
		{"500 with error body", reply{status: 500, body: `{"error":{"message":"The server had an error","type":"server_error"}}`},
			providers.StopReasonError, "HTTP 500: The server had an error", ""},
		{"401 plain body", reply{status: 401, body: `not json`}, providers.StopReasonError, "HTTP 401", ""},
		{"dropped connection", reply{fixture: "no-finish.sse", drop: true}, providers.StopReasonError, "", "cut off mid"},
		{"stream without finish", reply{fixture: "no-finish.sse"}, providers.StopReasonError, "ended before the response was complete", "cut off mid"},
		{"malformed chunk", reply{fixture: "malformed.sse"}, providers.StopReasonError, "malformed stream chunk", "partial "},
		{"content filter", reply{fixture: "content-filter.sse"}, providers.StopReasonError, "content filter", "I will"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, tc.reply)
			m := final(stream(t, context.Background(), s.provider(Options{HTTPOptions: providers.HTTPOptions{MaxRetries: -1}}), nil))
			if m.StopReason != tc.reason || !strings.Contains(m.ErrorMessage, tc.text) || m.ErrorMessage == "" {
				t.Fatalf("%s %q", m.StopReason, m.ErrorMessage)
			}
			if m.Text() != tc.kept {
				t.Fatalf("kept %q, want %q", m.Text(), tc.kept)
			}
		})
	}
}

func TestRetryAfterRateLimit(t *testing.T) {
	s := newServer(t,
		reply{status: 429, headers: map[string]string{"Retry-After": "0"}, body: `{"error":{"message":"slow down","type":"rate_limit"}}`},
		reply{status: 503, body: `{"error":{"message":"overloaded","type":"server_error"}}`},
		reply{fixture: "text.sse"})
	m := final(stream(t, context.Background(), s.provider(Options{}), nil))
	if m.Text() != "Hello, world" || len(s.requests()) != 3 {
		t.Fatalf("%q after %d requests", m.Text(), len(s.requests()))
	}
}

func TestRetryGivesUp(t *testing.T) {
	// A Retry-After beyond the ceiling ends the retries at once.
	s := newServer(t, reply{status: 429, headers: map[string]string{"Retry-After": "3600"}, body: `{"error":{"message":"quota","type":"rate_limit"}}`})
	start := time.Now()
	m := final(stream(t, context.Background(), s.provider(Options{HTTPOptions: providers.HTTPOptions{MaxRetryDelay: time.Second}}), nil))
	if m.StopReason != providers.StopReasonError || !strings.Contains(m.ErrorMessage, "HTTP 429") || len(s.requests()) != 1 {
		t.Fatalf("%s %q after %d requests", m.StopReason, m.ErrorMessage, len(s.requests()))
	}
	if time.Since(start) > 30*time.Second {
		t.Fatal("waited for a Retry-After beyond the ceiling")
	}
	// Client errors are not retried.
	s = newServer(t, reply{status: 400, body: `{"error":{"message":"bad request","type":"invalid_request_error"}}`})
	final(stream(t, context.Background(), s.provider(Options{}), nil))
	if len(s.requests()) != 1 {
		t.Fatalf("400 retried: %d requests", len(s.requests()))
	}
}

func TestCancelMidStream(t *testing.T) {
	s := newServer(t, reply{body: "data: " + `{"choices":[{"index":0,"delta":{"content":"first words"},"finish_reason":null}]}` + "\n\n", hold: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seq, _ := s.provider(Options{}).Stream(ctx, &providers.Request{Model: testModel, Messages: []providers.Message{providers.NewUserText("hi")}})
	var last providers.StreamEvent
	for e := range seq {
		if e.Type == providers.StreamTextDelta {
			cancel()
		}
		last = e
	}
	if last.Type != providers.StreamError || last.Reason != providers.StopReasonAborted || last.Message.ErrorMessage != providers.AbortedMessage {
		t.Fatalf("last %s %s %q", last.Type, last.Reason, last.Message.ErrorMessage)
	}
	if last.Message.Text() != "first words" {
		t.Fatalf("kept %q", last.Message.Text())
	}
}

func TestOptionsReachTheRequest(t *testing.T) {
	s := newServer(t, reply{fixture: "text.sse"})
	temp := 0.25
	par := false
	var header string
	s.check = func(int, map[string]any) {}
	p := s.provider(Options{Model: "override", ToolChoice: "required", ParallelToolCalls: &par,
		Headers: map[string]string{"X-Test": "yes"}})
	s.srv.Config.Handler = wrapHeader(s.srv.Config.Handler, &header)
	stream(t, context.Background(), p, &providers.Request{Messages: []providers.Message{providers.NewUserText("hi")},
		Options: providers.RequestOptions{MaxTokens: 77, Temperature: &temp}})
	b := s.requests()[0]
	if b["model"] != "override" || b["max_tokens"] != 77.0 || b["temperature"] != 0.25 || b["tool_choice"] != "required" || b["parallel_tool_calls"] != false {
		t.Fatalf("request %v", b)
	}
	if header != "yes" {
		t.Fatalf("extra header %q", header)
	}
}

func TestFromEnv(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	if _, _, ok := FromEnv(); ok {
		t.Fatal("ok without a key")
	}
	t.Setenv("OPENAI_API_KEY", "k")
	t.Setenv("OPENAI_MODEL", "")
	if p, m, ok := FromEnv(); !ok || p == nil || m.ID != DefaultModel {
		t.Fatalf("FromEnv = %v %+v %v", p, m, ok)
	}
	t.Setenv("OPENAI_MODEL", "local-7b")
	if _, m, _ := FromEnv(); m.ID != "local-7b" {
		t.Fatalf("model %q", m.ID)
	}
}
