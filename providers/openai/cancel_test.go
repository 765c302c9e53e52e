package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

// sendable checks a request's messages, as they go on the wire, against
// the rules a Chat Completions server enforces (chatRules).
func sendable(msgs []goopenai.ChatCompletionMessage) error {
	b, err := json.Marshal(map[string]any{"messages": wireMessages(msgs)})
	if err != nil {
		return err
	}
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		return err
	}
	return chatRules(body)
}

// TestCancellationLeavesASendableTranscript aborts a run at every stage and
// checks that the next request built from the transcript is one a server
// accepts.
func TestCancellationLeavesASendableTranscript(t *testing.T) {
	type args struct {
		Label string `json:"label"`
	}
	stages := []struct {
		name string
		// abortOn returns true for the event at which to abort.
		abortOn func(events.Event) bool
		before  bool // abort inside the policy hook
		body    bool // abort inside a tool body
	}{
		{name: "while text streams", abortOn: func(e events.Event) bool {
			u, ok := e.(events.MessageUpdate)
			return ok && u.Stream.Type == providers.StreamTextDelta
		}},
		{name: "while a tool call streams", abortOn: func(e events.Event) bool {
			u, ok := e.(events.MessageUpdate)
			return ok && u.Stream.Type == providers.StreamToolCallDelta
		}},
		{name: "in preflight", before: true},
		{name: "in a body", body: true},
		{name: "between turns", abortOn: func(e events.Event) bool { return e.Type() == events.TypeTurnEnd }},
	}
	for _, st := range stages {
		t.Run(st.name, func(t *testing.T) {
			var a *agent.Agent
			tool := tools.Must(tools.New(tools.Config{Name: "work"}, func(ctx context.Context, in args) (tools.Result, error) {
				if st.body {
					a.Abort()
					<-ctx.Done()
					return tools.Result{}, ctx.Err()
				}
				return tools.TextResult("worked " + in.Label), nil
			}))
			p := &faux.Provider{ChunkSize: 2}
			p.Push(faux.Reply(faux.Text("Working on it."),
				faux.Call("c1", "work", map[string]any{"label": "one"}),
				faux.Call("c2", "work", map[string]any{"label": "two"}),
				faux.Call("c3", "work", map[string]any{"label": "three"})),
				faux.Reply(faux.Text("done")))
			opts := agent.Options{Config: loop.Config{Provider: p, Model: testModel}, Tools: []*tools.Tool{tool}}
			if st.before {
				opts.Hooks = []loop.Hooks{{BeforeToolCall: func(ctx context.Context, c loop.BeforeCall) (loop.BeforeResult, error) {
					if c.Call.ID == "c2" {
						a.Abort()
					}
					return loop.BeforeResult{}, nil
				}}}
			}
			var err error
			if a, err = agent.New(opts); err != nil {
				t.Fatal(err)
			}
			if st.abortOn != nil {
				a.Subscribe(func(_ context.Context, e events.Event) {
					if st.abortOn(e) {
						a.Abort()
					}
				})
			}
			if err := a.Prompt(context.Background(), providers.NewUserText("go")); !errors.Is(err, context.Canceled) {
				t.Fatalf("an aborted run returned %v", err)
			}
			msgs := append(a.State().Messages, providers.NewUserText("continue"))
			out := convertMessages("system", testModel, msgs)
			if err := sendable(out); err != nil {
				var b strings.Builder
				for _, m := range out {
					fmt.Fprintf(&b, "%s %q %v %s\n", m.Role, m.Content, m.ToolCalls, m.ToolCallID)
				}
				t.Fatalf("%v\n%s", err, b.String())
			}
		})
	}
}

func TestSendableCatchesBadTranscripts(t *testing.T) {
	call := goopenai.ToolCall{ID: "c1", Type: "function", Function: goopenai.FunctionCall{Name: "x", Arguments: "{}"}}
	bad := [][]goopenai.ChatCompletionMessage{
		{{Role: "assistant", ToolCalls: []goopenai.ToolCall{call}}, {Role: "user", Content: "next"}},
		{{Role: "assistant"}},
		{{Role: "tool", ToolCallID: "c9", Content: "?"}},
		{{Role: "assistant", ToolCalls: []goopenai.ToolCall{{ID: "c1", Function: goopenai.FunctionCall{Arguments: `{"a":`}}}}, {Role: "tool", ToolCallID: "c1"}},
	}
	for i, msgs := range bad {
		if sendable(msgs) == nil {
			t.Errorf("case %d accepted", i)
		}
	}
}
