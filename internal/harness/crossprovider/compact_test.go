package crossprovider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop/internal/harness/recorded"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/loop/compact"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

// TestCompactedRequestsOnEveryWire: what each compaction strategy, and
// each order of a chain, sends over a long run of prompts and tool calls
// in a small window (summaries, trimmed starts, shortened results), sent
// by each of the four providers, is a request its server accepts.
func TestCompactedRequestsOnEveryWire(t *testing.T) {
	page := tools.Must(tools.New(tools.Config{Name: "lookup"}, func(_ context.Context, in struct {
		Q string `json:"q"`
	}) (string, error) {
		return "found " + in.Q + ": " + strings.Repeat("text ", 20+len(in.Q)*40), nil
	}))
	strategies := []struct {
		name string
		c    loop.Compactor
	}{
		{"trim", compact.Trim{}},
		{"trim keeping the first", compact.Trim{KeepFirst: true}},
		{"summarize", compact.Summarize{}},
		{"shorten results", compact.ShortenResults{OlderThan: 2}},
		{"summarize+shorten", compact.Chain(compact.Summarize{}, compact.ShortenResults{OlderThan: 2})},
		{"shorten+summarize", compact.Chain(compact.ShortenResults{OlderThan: 2}, compact.Summarize{})},
		{"trim+shorten", compact.Chain(compact.Trim{}, compact.ShortenResults{OlderThan: 2})},
		{"shorten+trim", compact.Chain(compact.ShortenResults{OlderThan: 2}, compact.Trim{})},
	}
	for _, st := range strategies {
		t.Run(st.name, func(t *testing.T) {
			// The requests of a long run on the scripted model.
			var mu sync.Mutex
			n := 0
			p := &faux.Provider{ChunkSize: 1 << 20}
			p.Default = func(_ context.Context, req *providers.Request) (providers.AssistantMessage, error) {
				if req.SystemPrompt == compact.DefaultSummaryPrompt {
					return faux.Reply(faux.Text("the summary")), nil
				}
				mu.Lock()
				defer mu.Unlock()
				n++
				if n%6 == 0 {
					return faux.Reply(faux.Text("an answer")), nil
				}
				return faux.Reply(faux.Text("looking"), faux.Call(fmt.Sprint("call-", n), "lookup", map[string]any{"q": strings.Repeat("q", n%4)})), nil
			}
			cfg := loop.Config{Provider: p, Model: providers.Model{ID: "m", ContextWindow: 1600, MaxTokens: 300}, Compactor: st.c, Limits: loop.Limits{MaxTurns: 20}}
			conv := loop.Conversation{Tools: []*tools.Tool{page}}
			for i := 0; n < 240; i++ {
				msgs, err := loop.Run(context.Background(), []providers.Message{providers.NewUserText(fmt.Sprint("prompt ", i))}, conv, cfg, nil)
				if err != nil {
					t.Fatal(err)
				}
				conv.Messages = append(conv.Messages, msgs...)
			}
			var sent [][]providers.Message
			for i, r := range p.Requests() {
				if r.SystemPrompt != compact.DefaultSummaryPrompt && i%8 == 7 {
					sent = append(sent, r.Messages)
				}
			}
			for _, w := range wires {
				replies := make([]recorded.Reply, len(sent))
				for i := range replies {
					replies[i] = recorded.Reply{Body: w.final("ok")}
				}
				s := recorded.NewScript(t, replies...)
				prov := w.new(t, s.URL)
				for i, msgs := range sent {
					seq, err := prov.Stream(context.Background(), &providers.Request{Model: w.model, Messages: msgs, Tools: []providers.ToolSpec{page.Spec()}})
					if err != nil {
						t.Fatal(err)
					}
					for range seq {
					}
					body := s.Requests()[i].Body
					if err := w.check(body); err != nil {
						raw, _ := json.Marshal(body)
						t.Fatalf("%s refuses request %d: %v\n%.600s", w.name, i, err, raw)
					}
				}
			}
		})
	}
}
