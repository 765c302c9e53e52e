package openai

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/internal/harness/recorded"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/kit"
	"github.com/agentloop/agentloop/tools"
)

// renamed is a recorded stream with its item and call ids made new, so
// that the server can stream it again in one conversation.
func renamed(body []byte, tag string) string {
	r := strings.NewReplacer(`:"rs_`, `:"rs_`+tag, `:"fc_`, `:"fc_`+tag, `:"msg_`, `:"msg_`+tag, `:"call_`, `:"call_`+tag)
	return r.Replace(string(body))
}

// TestRecordedReasoningConversations replays every recorded stream of an
// OpenAI reasoning model (gpt-5, gpt-5-mini, gpt-5.5) through the loop for
// three requests against a server that refuses what OpenAI refuses
// (strictServer): each recording answers the first request, again (with
// new ids) the second, and a plain answer the third. Every request must
// be accepted. The model is named as FromEnvResponses names it, without
// Model.Reasoning: asked for by name, the encrypted content comes back
// and each reasoning item that has it is sent back with it. A deployment
// whose name says nothing gets no encrypted content at first, and its
// reasoning items are left out (with the ids linked to them) rather than
// refused; once it has reasoned, the requests ask for it.
func TestRecordedReasoningConversations(t *testing.T) {
	for _, rec := range recorded.NativeRecordings(t, "responses") {
		if !strings.Contains(rec.Name, "gpt5") || rec.Expect.StopReason == "error" {
			continue
		}
		for _, name := range []string{"gpt-5", "my-deployment"} {
			t.Run(rec.Name+" as "+name, func(t *testing.T) {
				srv := newStrictServer(t, string(rec.Body), renamed(rec.Body, "b"), responsesAnswer("done"))
				var ts []*tools.Tool
				for _, c := range rec.Expect.Calls {
					ts = append(ts, tools.Must(tools.NewJSON(tools.Config{Name: c.Name}, json.RawMessage(`{"type":"object"}`),
						func(context.Context, map[string]any) (string, error) { return "42", nil })))
				}
				model := providers.Model{ID: name, API: ResponsesAPI, Provider: "openai"}
				cfg := loop.Config{Provider: NewResponses(Options{APIKey: "k", BaseURL: srv.URL, HTTPOptions: providers.HTTPOptions{MaxRetries: -1}}), Model: model}
				var msgs []providers.Message
				for range 3 {
					if len(srv.requests()) >= 3 {
						break
					}
					out, err := loop.Run(context.Background(), []providers.Message{providers.NewUserText("go on")}, loop.Conversation{Messages: msgs, Tools: ts}, cfg, nil)
					if err != nil {
						t.Fatalf("request %d: %v", len(srv.requests()), err)
					}
					msgs = append(msgs, out...)
				}
				reqs := srv.requests()
				if len(reqs) != 3 {
					t.Fatalf("%d requests", len(reqs))
				}
				if last := msgs[len(msgs)-1].(providers.AssistantMessage); last.Text() != "done" {
					t.Fatalf("the last answer %q", last.Text())
				}
				if raw, _ := json.Marshal(reqs[2]); strings.Contains(string(raw), kit.MissingResultText) {
					t.Errorf("a call went unanswered: %.300s", raw)
				}
				var first, second bool // reasoning items sent back, of each response
				for _, x := range reqs[2]["input"].([]any) {
					if it := x.(map[string]any); it["type"] == "reasoning" {
						id := it["id"].(string)
						first = first || !strings.HasPrefix(id, "rs_b")
						second = second || strings.HasPrefix(id, "rs_b")
					}
				}
				hasEncrypted := strings.Contains(string(rec.Body), `"encrypted_content":"`)
				// Named as a reasoning model, both responses' reasoning
				// items go back; otherwise the first response's reasoning
				// items came without encrypted content, and the second
				// request, to a model that has reasoned, asked for it.
				if second != hasEncrypted || first != (hasEncrypted && name == "gpt-5") {
					t.Errorf("reasoning items sent back: of the first response %v, of the second %v (recording has encrypted content: %v)", first, second, hasEncrypted)
				}
			})
		}
	}
}
