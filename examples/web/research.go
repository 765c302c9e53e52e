package main

// The demo agent: a lookup tool (one slow call, with progress updates), a
// link checker that fails, and a scripted model that uses them.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

type lookupArgs struct {
	Topic string `json:"topic" jsonschema:"description=What to look up"`
}

// researchAgent builds the agent; slow is how long the slow lookup takes.
func researchAgent(p providers.Provider, m providers.Model, slow time.Duration) (*agent.Agent, error) {
	lookup, err := tools.New(tools.Config{Name: "lookup", Description: "Look a topic up in the archive"},
		func(ctx context.Context, in lookupArgs) (string, error) {
			d := 100 * time.Millisecond
			if strings.Contains(in.Topic, "history") {
				d = slow
			}
			for i := 1; i <= 3; i++ {
				tools.ReportProgress(ctx, tools.TextResult(fmt.Sprintf("reading page %d of 3", i)))
				select {
				case <-ctx.Done():
					return "", ctx.Err()
				case <-time.After(d / 3):
				}
			}
			return "found 3 notes on " + in.Topic, nil
		})
	if err != nil {
		return nil, err
	}
	check, err := tools.New(tools.Config{Name: "check_links", Description: "Check that the links in the notes work"},
		func(context.Context, lookupArgs) (string, error) {
			return "", errors.New("2 of 9 links are broken")
		})
	if err != nil {
		return nil, err
	}
	return agent.New(agent.Options{
		Config:       loop.Config{Provider: p, Model: m},
		Tools:        []*tools.Tool{lookup, check},
		SystemPrompt: "You research topics with the tools you have.",
	})
}

// scripted is the offline model: it answers each user message with three tool calls, then a
// summary; a message that arrives while it works is acknowledged.
func scripted() *faux.Provider {
	p := &faux.Provider{Delay: 8 * time.Millisecond, ChunkSize: 2}
	p.Default = func(_ context.Context, req *providers.Request) (providers.AssistantMessage, error) {
		n := len(req.Messages)
		switch last := req.Messages[n-1].(type) {
		case providers.UserMessage:
			if n > 1 {
				if _, ok := req.Messages[n-2].(providers.ToolResultMessage); ok {
					return faux.Reply(faux.Text("Noted: " + last.Text() + ". All three lookups are done; the summary stands.")), nil
				}
			}
			id := func(k int) string { return fmt.Sprintf("call_%d_%d", n, k) }
			return faux.Reply(faux.Text("I'll look into \""+last.Text()+"\" from three sides."),
				faux.Call(id(1), "lookup", map[string]any{"topic": last.Text() + " history"}),
				faux.Call(id(2), "lookup", map[string]any{"topic": last.Text() + " today"}),
				faux.Call(id(3), "check_links", map[string]any{"topic": last.Text()})), nil
		default:
			return faux.Reply(faux.Text("All three lookups are back: two found notes, and the link check failed (2 of 9 links are broken).")), nil
		}
	}
	return p
}
