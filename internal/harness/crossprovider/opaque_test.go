package crossprovider

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/internal/harness/recorded"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/tools"
)

// TestOpaqueDataSurvives: what a native provider must get back (Anthropic's
// thinking signature, Gemini's thought signature, a Responses reasoning
// item with its encrypted content) survives the wire form of events (what
// SSE and NATS carry) and a saved and loaded session, and reaches the
// provider that produced it with the next request.
func TestOpaqueDataSurvives(t *testing.T) {
	lookup := tools.Must(tools.New(tools.Config{Name: "lookup"}, func(_ context.Context, in struct {
		Q string `json:"q"`
	}) (string, error) {
		return "found " + in.Q, nil
	}))
	marker := map[string]string{"responses": "OPAQUE-responses", "anthropic": "OPAQUE-anthropic", "gemini": "T1BBUVVFLWdlbWluaQ=="}
	for _, w := range wires {
		if marker[w.name] == "" {
			continue
		}
		t.Run(w.name, func(t *testing.T) {
			s1 := recorded.NewScript(t, recorded.Reply{Body: w.first("call_1")}, recorded.Reply{Body: w.final("first answer")})
			a, err := agent.New(agent.Options{Config: loop.Config{Provider: w.new(t, s1.URL), Model: w.model}, Tools: []*tools.Tool{lookup}})
			if err != nil {
				t.Fatal(err)
			}
			var wireEnds []providers.Message
			a.Subscribe(func(_ context.Context, e events.Event) {
				if _, ok := e.(events.MessageEnd); !ok {
					return
				}
				raw, err := events.MarshalWire(e)
				if err != nil {
					t.Error(err)
					return
				}
				back, err := events.Unmarshal(raw)
				if err != nil {
					t.Error(err)
					return
				}
				wireEnds = append(wireEnds, back.(events.MessageEnd).Message)
			})
			if err := a.Prompt(context.Background(), providers.NewUserText("start")); err != nil {
				t.Fatal(err)
			}
			kept := a.State().Messages
			if got, want := mustJSON(wireEnds), mustJSON(kept); got != want || !strings.Contains(got, marker[w.name]) {
				t.Errorf("the wire form lost something:\n%s\nwant\n%s", got, want)
			}
			var session bytes.Buffer
			if err := a.SaveSession(&session); err != nil {
				t.Fatal(err)
			}
			s2 := recorded.NewScript(t, recorded.Reply{Body: w.final("second answer")})
			b, err := agent.New(agent.Options{Config: loop.Config{Provider: w.new(t, s2.URL), Model: w.model}, Tools: []*tools.Tool{lookup}})
			if err != nil {
				t.Fatal(err)
			}
			if err := b.LoadSession(&session); err != nil {
				t.Fatal(err)
			}
			if got, want := mustJSON(b.State().Messages), mustJSON(kept); got != want {
				t.Errorf("the session lost something:\n%s\nwant\n%s", got, want)
			}
			if err := b.Prompt(context.Background(), providers.NewUserText("again")); err != nil {
				t.Fatal(err)
			}
			if sent := mustJSON(s2.Requests()[0].Body); !strings.Contains(sent, marker[w.name]) {
				t.Errorf("the next request lacks the provider's own data %s:\n%s", marker[w.name], sent)
			}
		})
	}
}

func mustJSON(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}
