package crossprovider

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/internal/harness/recorded"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/anthropic"
	"github.com/agentloop/agentloop/providers/gemini"
	"github.com/agentloop/agentloop/providers/kit"
	"github.com/agentloop/agentloop/providers/openai"
	"github.com/agentloop/agentloop/tools"
)

// wire is one provider with a scripted server speaking its format.
type wire struct {
	name  string
	model providers.Model
	// first is the response that thinks (with the provider's opaque data,
	// marked OPAQUE-name) and calls lookup with the given id; final is a
	// plain answer.
	first func(id string) string
	final func(text string) string
	new   func(t *testing.T, url string) providers.Provider
	// check finds what the server would refuse in a request body: a result
	// that answers no call before it, an id it does not accept, a first
	// message that is not the user's (Anthropic, Gemini), a call turn that
	// follows neither a user turn nor a function response (Gemini).
	check func(body map[string]any) error
}

var anthropicID = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

var wires = []wire{
	{
		name:  "chat",
		model: providers.Model{ID: "gpt-chat", API: "openai-completions", Provider: "openai"},
		first: func(id string) string {
			return recorded.SSE(`{"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"thinking in chat"}}]}`,
				fmt.Sprintf(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":%q,"type":"function","function":{"name":"lookup","arguments":"{\"q\":\"x\"}"}}]}}]}`, id),
				`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`) + "data: [DONE]\n\n"
		},
		final: func(text string) string {
			return recorded.SSE(fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":%q},"finish_reason":"stop"}]}`, text)) + "data: [DONE]\n\n"
		},
		new: func(t *testing.T, url string) providers.Provider {
			return openai.New(openai.Options{APIKey: "k", BaseURL: url})
		},
		check: func(body map[string]any) error {
			open := map[string]bool{}
			for _, m := range body["messages"].([]any) {
				m := m.(map[string]any)
				switch m["role"] {
				case "assistant":
					open = map[string]bool{}
					calls, _ := m["tool_calls"].([]any)
					for _, c := range calls {
						open[c.(map[string]any)["id"].(string)] = true
					}
				case "tool":
					if !open[m["tool_call_id"].(string)] {
						return fmt.Errorf("tool result %v answers no call", m["tool_call_id"])
					}
					delete(open, m["tool_call_id"].(string))
				default:
					if len(open) > 0 {
						return fmt.Errorf("calls %v left without results", open)
					}
				}
			}
			return nil
		},
	},
	{
		name:  "responses",
		model: providers.Model{ID: "gpt-responses", API: openai.ResponsesAPI, Provider: "openai", Reasoning: true},
		first: func(id string) string {
			return recorded.SSE(`{"type":"response.created","response":{"id":"r1"}}`,
				`{"type":"response.output_item.added","item":{"id":"rs_1","type":"reasoning","summary":[]}}`,
				`{"type":"response.reasoning_summary_text.delta","item_id":"rs_1","delta":"thinking in responses"}`,
				`{"type":"response.output_item.done","item":{"id":"rs_1","type":"reasoning","encrypted_content":"OPAQUE-responses","summary":[{"type":"summary_text","text":"thinking in responses"}]}}`,
				fmt.Sprintf(`{"type":"response.output_item.added","item":{"id":"fc_1","type":"function_call","call_id":%q,"name":"lookup","arguments":""}}`, id),
				`{"type":"response.function_call_arguments.delta","item_id":"fc_1","delta":"{\"q\":\"x\"}"}`,
				fmt.Sprintf(`{"type":"response.output_item.done","item":{"id":"fc_1","type":"function_call","call_id":%q,"name":"lookup","arguments":"{\"q\":\"x\"}"}}`, id),
				`{"type":"response.completed","response":{"id":"r1","usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}}}`)
		},
		final: func(text string) string {
			return recorded.SSE(`{"type":"response.output_item.added","item":{"id":"msg_1","type":"message"}}`,
				fmt.Sprintf(`{"type":"response.output_text.delta","item_id":"msg_1","delta":%q}`, text),
				`{"type":"response.output_item.done","item":{"id":"msg_1","type":"message"}}`,
				`{"type":"response.completed","response":{"id":"r2"}}`)
		},
		new: func(t *testing.T, url string) providers.Provider {
			return openai.NewResponses(openai.Options{APIKey: "k", BaseURL: url})
		},
		check: func(body map[string]any) error {
			calls := map[string]bool{}
			for _, it := range body["input"].([]any) {
				it := it.(map[string]any)
				switch it["type"] {
				case "function_call":
					calls[it["call_id"].(string)] = true
				case "function_call_output":
					if !calls[it["call_id"].(string)] {
						return fmt.Errorf("output %v answers no call", it["call_id"])
					}
					delete(calls, it["call_id"].(string))
				}
			}
			if len(calls) > 0 {
				return fmt.Errorf("calls %v left without output", calls)
			}
			return nil
		},
	},
	{
		name:  "anthropic",
		model: providers.Model{ID: "claude", API: anthropic.API, Provider: "anthropic", Reasoning: true},
		first: func(id string) string {
			return recorded.SSE(`{"type":"message_start","message":{"id":"m1","type":"message","role":"assistant","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}`,
				`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"thinking in anthropic"}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"OPAQUE-anthropic"}}`,
				`{"type":"content_block_stop","index":0}`,
				fmt.Sprintf(`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":%q,"name":"lookup","input":{}}}`, id),
				`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"q\":\"x\"}"}}`,
				`{"type":"content_block_stop","index":1}`,
				`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}`,
				`{"type":"message_stop"}`)
		},
		final: func(text string) string {
			return recorded.SSE(`{"type":"message_start","message":{"id":"m2","type":"message","role":"assistant","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}`,
				`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
				fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%q}}`, text),
				`{"type":"content_block_stop","index":0}`,
				`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}`,
				`{"type":"message_stop"}`)
		},
		new: func(t *testing.T, url string) providers.Provider {
			return anthropic.New(anthropic.Options{APIKey: "k", BaseURL: url})
		},
		check: func(body map[string]any) error {
			open := map[string]bool{}
			for i, m := range body["messages"].([]any) {
				m := m.(map[string]any)
				if i == 0 && m["role"] != "user" {
					return fmt.Errorf("the first message is the %v's, not the user's", m["role"])
				}
				results := map[string]bool{}
				for _, b := range m["content"].([]any) {
					b := b.(map[string]any)
					switch b["type"] {
					case "tool_use":
						id := b["id"].(string)
						if !anthropicID.MatchString(id) {
							return fmt.Errorf("tool_use id %q is not one the API accepts", id)
						}
						open[id] = true
					case "tool_result":
						id := b["tool_use_id"].(string)
						if !open[id] {
							return fmt.Errorf("tool_result %q answers no call of the message before", id)
						}
						results[id] = true
					}
				}
				if m["role"] == "user" {
					for id := range open {
						if !results[id] {
							return fmt.Errorf("call %q has no result in the next message", id)
						}
					}
					open = map[string]bool{}
				}
			}
			return nil
		},
	},
	{
		name:  "gemini",
		model: providers.Model{ID: "gemini-x", API: gemini.API, Provider: "google", Reasoning: true},
		first: func(id string) string {
			return "data: " + fmt.Sprintf(`{"candidates":[{"content":{"role":"model","parts":[{"text":"thinking in gemini","thought":true},{"functionCall":{"id":%q,"name":"lookup","args":{"q":"x"}},"thoughtSignature":"T1BBUVVFLWdlbWluaQ=="}]},"finishReason":"STOP","index":0}]}`, id) + "\r\n\r\n"
		},
		final: func(text string) string {
			return "data: " + fmt.Sprintf(`{"candidates":[{"content":{"role":"model","parts":[{"text":%q}]},"finishReason":"STOP","index":0}]}`, text) + "\r\n\r\n"
		},
		new: func(t *testing.T, url string) providers.Provider {
			p, err := gemini.New(context.Background(), gemini.Options{APIKey: "k", BaseURL: url})
			if err != nil {
				t.Fatal(err)
			}
			return p
		},
		check: func(body map[string]any) error {
			var calls map[string]bool
			prev := ""
			for i, c := range body["contents"].([]any) {
				c := c.(map[string]any)
				if i == 0 && c["role"] != "user" {
					return fmt.Errorf("the first content is the %v's, not the user's", c["role"])
				}
				next := map[string]bool{}
				for _, p := range c["parts"].([]any) {
					p := p.(map[string]any)
					if fc, ok := p["functionCall"].(map[string]any); ok {
						next[fmt.Sprint(fc["id"])] = true
					}
					if fr, ok := p["functionResponse"].(map[string]any); ok {
						if !calls[fmt.Sprint(fr["id"])] {
							return fmt.Errorf("functionResponse %v answers no call of the turn before", fr["id"])
						}
						delete(calls, fmt.Sprint(fr["id"]))
					}
				}
				if c["role"] == "user" && len(calls) > 0 {
					return fmt.Errorf("calls %v left without responses", calls)
				}
				if len(next) > 0 {
					if prev != "user" {
						return fmt.Errorf("a function call turn after a %q turn, not a user turn or a function response", prev)
					}
					calls = next
				}
				prev = fmt.Sprint(c["role"])
			}
			return nil
		},
	},
}

// TestSwitchingProviders: a conversation begun on one provider (its model
// thinks, with its opaque data, and calls a tool under an id only some
// servers accept; a later call is left without a result, as a cancelled
// run leaves it) goes on with every other provider, and each request is
// one its server accepts: ids the target refuses replaced the same way in
// call and result, the missing result stood in for, the other model's
// thinking sent as text and its opaque data not at all.
func TestSwitchingProviders(t *testing.T) {
	lookup := tools.Must(tools.New(tools.Config{Name: "lookup"}, func(_ context.Context, in struct {
		Q string `json:"q"`
	}) (string, error) {
		return "found " + in.Q, nil
	}))
	for _, from := range wires {
		for _, to := range wires {
			if from.name == to.name {
				continue
			}
			t.Run(from.name+"→"+to.name, func(t *testing.T) {
				a := recorded.NewScript(t, recorded.Reply{Body: from.first("call.1:x")}, recorded.Reply{Body: from.final("first answer")})
				ctx := context.Background()
				msgs, err := loop.Run(ctx, []providers.Message{providers.NewUserText("start")}, loop.Conversation{Tools: []*tools.Tool{lookup}},
					loop.Config{Provider: from.new(t, a.URL), Model: from.model}, nil)
				if err != nil {
					t.Fatal(err)
				}
				// A cancelled run's call, left without a result.
				msgs = append(msgs, providers.NewUserText("more"), providers.AssistantMessage{API: from.model.API, Provider: from.model.Provider,
					Model: from.model.ID, StopReason: providers.StopReasonAborted, ErrorMessage: providers.AbortedMessage,
					Content: []providers.Content{providers.ToolCall{ID: "orphan/2", Name: "lookup", Arguments: map[string]any{"q": "y"}}}})
				b := recorded.NewScript(t, recorded.Reply{Body: to.final("second answer")})
				out, err := loop.Run(ctx, []providers.Message{providers.NewUserText("go on")}, loop.Conversation{Messages: msgs, Tools: []*tools.Tool{lookup}},
					loop.Config{Provider: to.new(t, b.URL), Model: to.model}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if last := out[len(out)-1].(providers.AssistantMessage); last.Text() != "second answer" {
					t.Fatalf("the second provider answered %q (%s)", last.Text(), last.ErrorMessage)
				}
				body := b.Requests()[0].Body
				if err := to.check(body); err != nil {
					raw, _ := json.Marshal(body)
					t.Fatalf("%v\n%s", err, raw)
				}
				raw, _ := json.Marshal(body)
				js := string(raw)
				if strings.Contains(js, "OPAQUE-") || strings.Contains(js, "T1BBUVVF") {
					t.Errorf("the other provider's opaque data was sent: %s", js)
				}
				if want := "thinking in " + from.name; !strings.Contains(js, want) {
					t.Errorf("the other model's thinking %q was not sent as text: %s", want, js)
				}
				if strings.Count(js, "found x") != 1 || !strings.Contains(js, kit.MissingResultText) {
					t.Errorf("results: the tool's once, a stand-in for the orphan: %s", js)
				}
			})
		}
	}
}
