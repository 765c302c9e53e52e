package crossprovider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/internal/harness/recorded"
	"github.com/agentloop/agentloop/loop"
)

type invoice struct {
	Number string  `json:"number"`
	Total  float64 `json:"total"`
	Paid   bool    `json:"paid"`
}

const invoiceJSON = `{"number":"INV-7","total":120.5,"paid":true}`

// TestAskOnEveryWire: agent.Ask asks each provider for the answer the way
// it offers: Chat Completions' response_format json_schema, the Responses
// API's text.format, Gemini's responseJsonSchema, and for Anthropic a
// final-answer tool; each server sees the schema where it expects it, and
// the answer comes back typed.
func TestAskOnEveryWire(t *testing.T) {
	checks := map[string]func(body map[string]any) error{
		"chat": func(b map[string]any) error {
			rf, _ := b["response_format"].(map[string]any)
			js, _ := rf["json_schema"].(map[string]any)
			if rf["type"] != "json_schema" || js["name"] != "final_answer" || !hasTotal(js["schema"]) {
				return fmt.Errorf("response_format %v", rf)
			}
			return nil
		},
		"responses": func(b map[string]any) error {
			text, _ := b["text"].(map[string]any)
			f, _ := text["format"].(map[string]any)
			if f["type"] != "json_schema" || f["name"] != "final_answer" || !hasTotal(f["schema"]) {
				return fmt.Errorf("text %v", text)
			}
			return nil
		},
		"gemini": func(b map[string]any) error {
			g, _ := b["generationConfig"].(map[string]any)
			if g["responseMimeType"] != "application/json" || !hasTotal(g["responseJsonSchema"]) {
				return fmt.Errorf("generationConfig %v", g)
			}
			return nil
		},
		"anthropic": func(b map[string]any) error {
			for _, tl := range b["tools"].([]any) {
				if tl := tl.(map[string]any); tl["name"] == "final_answer" && hasTotal(tl["input_schema"]) {
					return nil
				}
			}
			return fmt.Errorf("no final_answer tool in %v", b["tools"])
		},
	}
	anthropicAnswer := recorded.SSE(`{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"final_answer","input":{}}}`,
		fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":%q}}`, invoiceJSON),
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}`,
		`{"type":"message_stop"}`)
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			body := w.final(invoiceJSON)
			if w.name == "anthropic" {
				body = anthropicAnswer
			}
			s := recorded.NewScript(t, recorded.Reply{Body: body}, recorded.Reply{Body: w.final("done")})
			a, err := agent.New(agent.Options{Config: loop.Config{Provider: w.new(t, s.URL), Model: w.model}})
			if err != nil {
				t.Fatal(err)
			}
			got, err := agent.Ask[invoice](context.Background(), a, "Which invoice?")
			if err != nil {
				t.Fatal(err)
			}
			if got != (invoice{"INV-7", 120.5, true}) {
				t.Fatalf("answer %+v", got)
			}
			if err := checks[w.name](s.Requests()[0].Body); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func hasTotal(schema any) bool {
	raw, _ := json.Marshal(schema)
	return strings.Contains(string(raw), `"total"`)
}

// TestAskOverRecordedChatStream: a real Chat Completions stream (recorded
// from OpenAI: text, then a tool call) is no answer; Ask says so after one
// attempt, and the request carried the schema.
func TestAskOverRecordedChatStream(t *testing.T) {
	body, err := os.ReadFile(filepath.Join(recorded.Dir(t), "openai-gpt4o-text-then-tool.sse"))
	if err != nil {
		t.Fatal(err)
	}
	var sent map[string]any
	srv, _ := recorded.Serve(t, body, func(r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &sent)
	})
	chat := wires[0]
	a, err := agent.New(agent.Options{Config: loop.Config{Provider: chat.new(t, srv.URL), Model: chat.model, Limits: loop.Limits{MaxTurns: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = agent.AskWith[invoice](context.Background(), a, "Which invoice?", agent.AskOptions{MaxAttempts: 1})
	var ae *agent.AnswerError
	var re *loop.RunError
	if !errors.As(err, &ae) && !errors.As(err, &re) {
		t.Fatalf("error %v", err)
	}
	rf, _ := sent["response_format"].(map[string]any)
	if rf["type"] != "json_schema" {
		t.Fatalf("the request's response_format: %v", rf)
	}
}
