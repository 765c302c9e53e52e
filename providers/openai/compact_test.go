package openai

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/loop/compact"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
)

// TestCompactedRequestsAreSendable: what every compaction strategy sends
// (a long conversation of tool calls, a stored summary among it) is a
// request the rules-enforcing server accepts.
func TestCompactedRequestsAreSendable(t *testing.T) {
	transcript := []providers.Message{providers.NewUserText("start the survey")}
	for i := range 60 {
		id := fmt.Sprint("c", i)
		transcript = append(transcript, faux.Reply(faux.Text("next"), faux.Call(id, "fetch", map[string]any{"n": i}), faux.Call(id+"b", "fetch", map[string]any{"n": -i})),
			providers.ToolResultMessage{ToolCallID: id, ToolName: "fetch", Content: []providers.Content{providers.Text{Text: strings.Repeat("data ", 300)}}},
			providers.ToolResultMessage{ToolCallID: id + "b", ToolName: "fetch", Content: []providers.Content{providers.Text{Text: "ok"}}})
		if i == 20 {
			transcript = append(transcript, providers.SummaryMessage{Summary: "the first twenty pages were read", Through: 30})
		}
	}
	transcript = append(transcript, providers.NewUserText("and now?"))
	summarizer := faux.New(faux.Reply(faux.Text("a summary")))
	for _, tc := range []struct {
		name string
		c    loop.Compactor
	}{
		{"trim", compact.Trim{Window: 3000}},
		{"trim keeping the first message", compact.Trim{Window: 3000, KeepFirst: true}},
		{"summarize", compact.Summarize{Window: 3000}},
		{"shorten results", compact.ShortenResults{OlderThan: 2, Keep: 50}},
		{"chain", compact.Chain(compact.Summarize{Window: 3000}, compact.ShortenResults{OlderThan: 2})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tc.c.Compact(context.Background(), loop.CompactInput{Transcript: transcript, Model: testModel, Provider: summarizer})
			if err != nil {
				t.Fatal(err)
			}
			send := out.Send
			if send == nil {
				send = transcript
			}
			// The provider would repair a broken request (stand-ins, orphans
			// left out): check the compaction itself kept every pair.
			open := map[string]bool{}
			for _, m := range send {
				switch m := m.(type) {
				case providers.AssistantMessage:
					for _, c := range m.ToolCalls() {
						open[c.ID] = true
					}
				case providers.ToolResultMessage:
					if !open[m.ToolCallID] {
						t.Fatalf("%s sends the result of %s without its call", tc.name, m.ToolCallID)
					}
					delete(open, m.ToolCallID)
				}
			}
			if len(open) > 0 {
				t.Fatalf("%s sends calls without results: %v", tc.name, open)
			}
			s := newServer(t, reply{fixture: "done-text.sse"})
			var refused error
			s.check = func(_ int, body map[string]any) { refused = chatRules(body) }
			m := final(stream(t, context.Background(), s.provider(Options{}), &providers.Request{Model: testModel, Messages: send}))
			if refused != nil || m.StopReason != providers.StopReasonStop {
				t.Fatalf("a server would refuse what %s sends: %v (%s)", tc.name, refused, m.ErrorMessage)
			}
		})
	}
}
