package main

import (
	"context"
	"fmt"
	"time"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/providers/openai"
	"github.com/agentloop/agentloop/tools"
)

type fetchArgs struct {
	Source string `json:"source" jsonschema:"description=Where to read: wiki, news or forum"`
	Query  string `json:"query"`
}

// workerAgent is the agent the worker runs: a fetch tool that reports its
// progress, on a live model when OPENAI_API_KEY is set and a scripted one
// otherwise.
func workerAgent() (*agent.Agent, error) {
	fetch, err := tools.New(tools.Config{Name: "fetch", Description: "Read what a source says about a query"},
		func(ctx context.Context, in fetchArgs) (string, error) {
			for _, step := range []string{"connecting", "reading"} {
				tools.ReportProgress(ctx, tools.TextResult(step+" "+in.Source))
				select {
				case <-ctx.Done():
					return "", ctx.Err()
				case <-time.After(200 * time.Millisecond): // a slow upstream
				}
			}
			return fmt.Sprintf("%s: 3 items about %q", in.Source, in.Query), nil
		})
	if err != nil {
		return nil, err
	}
	script := scriptedFetcher()
	var p providers.Provider = script
	m := script.Model("scripted")
	if live, lm, ok := openai.FromEnv(); ok {
		p, m = live, lm
	}
	return agent.New(agent.Options{Config: loop.Config{Provider: p, Model: m}, Tools: []*tools.Tool{fetch},
		SystemPrompt: "Answer from what the sources say; fetch from several at once."})
}

// scriptedFetcher answers a user message with three fetches, then a
// summary once their results are in.
func scriptedFetcher() *faux.Provider {
	p := &faux.Provider{Delay: 5 * time.Millisecond, ChunkSize: 3}
	p.Default = func(_ context.Context, req *providers.Request) (providers.AssistantMessage, error) {
		n := len(req.Messages)
		user, ok := req.Messages[n-1].(providers.UserMessage)
		if !ok {
			return faux.Reply(faux.Text("The three sources agree.")), nil
		}
		var calls []providers.Content
		for i, source := range []string{"wiki", "news", "forum"} {
			calls = append(calls, faux.Call(fmt.Sprintf("f%d_%d", n, i), "fetch", map[string]any{"source": source, "query": user.Text()}))
		}
		return faux.Reply(append([]providers.Content{faux.Text("Reading three sources.")}, calls...)...), nil
	}
	return p
}
