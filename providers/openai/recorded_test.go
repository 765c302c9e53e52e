package openai

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/internal/harness/recorded"
	"github.com/agentloop/agentloop/providers"
)

// recordedExpect is what a correct client assembles from a recording (the
// "expect" object of NAME.expect.json).
type recordedExpect struct {
	Text           string `json:"text"`
	Reasoning      string `json:"reasoning"`
	ReasoningOther string `json:"reasoning_other"`
	ToolCalls      []struct {
		ID        string         `json:"id"`
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	} `json:"tool_calls"`
	StopReason    string       `json:"stop_reason"`
	StopReasonAlt []string     `json:"stop_reason_alt"`
	Usage         *expectUsage `json:"usage"`
	UsageOther    *expectUsage `json:"usage_other"`
	Blocks        []string     `json:"blocks"`
	ErrorContains string       `json:"error_contains"`
	ErrorRequired bool         `json:"error_contains_required"`
}

// TestRecordedStreams plays every Chat Completions stream recorded from a
// real service (OpenAI, Azure, Groq, DeepSeek, Alibaba, xAI, Mistral, vLLM,
// Ollama, llama.cpp, OpenRouter, Z.ai) through the provider, served in
// pieces of 1 to 97 bytes as replay.py serves them, and checks text,
// thinking, tool calls, stop reason, usage, block order and the server's
// own message on a stream that ends in an error.
func TestRecordedStreams(t *testing.T) {
	dir := recorded.Dir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.sse"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recordings in %s (%v)", dir, err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".sse")
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(filepath.Join(dir, name+".expect.json"))
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Expect recordedExpect `json:"expect"`
			}
			if err := json.Unmarshal(raw, &doc); err != nil {
				t.Fatal(err)
			}
			want := doc.Expect
			srv, requests := recorded.Serve(t, body, nil)
			p := New(Options{APIKey: "k", BaseURL: srv.URL + "/v1", HTTPOptions: providers.HTTPOptions{MaxRetries: -1}})
			evs := stream(t, context.Background(), p, nil)
			ends := 0
			for _, e := range evs {
				if e.Type == providers.StreamDone || e.Type == providers.StreamError {
					ends++
				}
			}
			if ends != 1 || *requests != 1 {
				t.Fatalf("%d terminal events, %d requests", ends, *requests)
			}
			m := final(evs)
			checkRecorded(t, m, want)
		})
	}
}

type expectUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	CachedTokens     int `json:"cached_tokens"`
}

func checkRecorded(t *testing.T, m *providers.AssistantMessage, want recordedExpect) {
	t.Helper()
	if got := m.Text(); got != want.Text {
		t.Errorf("text %q\nwant %q", got, want.Text)
	}
	var thinking string
	var blocks []string
	var calls []providers.ToolCall
	for _, b := range m.Content {
		blocks = append(blocks, b.ContentType())
		switch b := b.(type) {
		case providers.Thinking:
			thinking += b.Thinking
		case providers.ToolCall:
			calls = append(calls, b)
		}
	}
	if wantThinking := want.Reasoning + want.ReasoningOther; thinking != wantThinking {
		t.Errorf("thinking %q\nwant %q", thinking, wantThinking)
	}
	if want.Blocks == nil {
		want.Blocks = []string{}
	}
	if blocks == nil {
		blocks = []string{}
	}
	if !slices.Equal(blocks, want.Blocks) {
		t.Errorf("blocks %v, want %v", blocks, want.Blocks)
	}
	if len(calls) != len(want.ToolCalls) {
		t.Fatalf("%d tool calls, want %d", len(calls), len(want.ToolCalls))
	}
	for i, w := range want.ToolCalls {
		c := calls[i]
		if w.Arguments == nil {
			w.Arguments = map[string]any{}
		}
		if c.ID != w.ID || c.Name != w.Name || !reflect.DeepEqual(c.Arguments, w.Arguments) || c.Incomplete {
			t.Errorf("call %d: %s %s %v incomplete=%v, want %s %s %v", i, c.ID, c.Name, c.Arguments, c.Incomplete, w.ID, w.Name, w.Arguments)
		}
	}
	if string(m.StopReason) != want.StopReason && !slices.Contains(want.StopReasonAlt, string(m.StopReason)) {
		t.Errorf("stop reason %s, want %s (or %v); error %q", m.StopReason, want.StopReason, want.StopReasonAlt, m.ErrorMessage)
	}
	if want.ErrorRequired && !strings.Contains(m.ErrorMessage, want.ErrorContains) {
		t.Errorf("error message %q lacks the server's %q", m.ErrorMessage, want.ErrorContains)
	}
	wu := want.Usage
	if wu == nil {
		wu = want.UsageOther
	}
	var u providers.Usage // input = prompt - cached, output = completion, cacheRead = cached
	if wu != nil {
		u = providers.Usage{Input: wu.PromptTokens - wu.CachedTokens, Output: wu.CompletionTokens, CacheRead: wu.CachedTokens, TotalTokens: wu.TotalTokens}
	}
	got := m.Usage
	got.Cost = providers.Cost{}
	if got != u {
		t.Errorf("usage %+v, want %+v", got, u)
	}
}
