package loop_test

import (
	"context"
	"fmt"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

type echoArgs struct {
	Text string `json:"text"`
}

// A run whose response was cut off by the token limit: no tool body runs,
// and the model is told why.
func ExampleRun() {
	echo := tools.Must(tools.New(tools.Config{Name: "echo", Description: "Echo the text"}, func(_ context.Context, in echoArgs) (tools.Result, error) {
		return tools.TextResult(in.Text), nil
	}))
	cut := faux.Reply(faux.Call("c1", "echo", map[string]any{"text": "half of it"}))
	cut.StopReason = providers.StopReasonLength
	model := faux.New(cut, faux.Reply(faux.Call("c2", "echo", map[string]any{"text": "all of it"})), faux.Reply(faux.Text("done")))

	print := func(_ context.Context, e events.Event) {
		if end, ok := e.(events.ToolExecutionEnd); ok {
			fmt.Printf("%s error=%v: %s\n", end.ToolCallID, end.IsError, providers.TextOf(end.Result.Content))
		}
	}
	_, err := loop.Run(context.Background(), []providers.Message{providers.NewUserText("echo something")},
		loop.Conversation{Tools: []*tools.Tool{echo}},
		loop.Config{Provider: model, Model: providers.Model{ID: "scripted"}}, print)
	if err != nil {
		panic(err)
	}
	// Output:
	// c1 error=true: Tool call "echo" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments.
	// c2 error=false: all of it
}

// Two policy bundles and an observer: the first bundle rewrites the
// arguments, the second sees the rewrite and blocks a call, and the
// observer's OnEvent hook sees every event before the run's handler.
func ExampleHooks() {
	echo := tools.Must(tools.New(tools.Config{Name: "echo", Description: "Echo the text"}, func(_ context.Context, in echoArgs) (tools.Result, error) {
		return tools.TextResult(in.Text), nil
	}))
	model := faux.New(faux.Reply(
		faux.Call("c1", "echo", map[string]any{"text": "hello"}),
		faux.Call("c2", "echo", map[string]any{"text": "secret"}),
	), faux.Reply(faux.Text("done")))

	shout := loop.Hooks{BeforeToolCall: func(_ context.Context, c loop.BeforeCall) (loop.BeforeResult, error) {
		return loop.BeforeResult{Args: map[string]any{"text": fmt.Sprint(c.Args["text"], "!")}}, nil
	}}
	noSecrets := loop.Hooks{BeforeToolCall: func(_ context.Context, c loop.BeforeCall) (loop.BeforeResult, error) {
		if c.Args["text"] == "secret!" { // the first bundle's rewrite
			return loop.BeforeResult{Block: true, Reason: "not that one"}, nil
		}
		return loop.BeforeResult{}, nil
	}}
	observer := loop.Hooks{OnEvent: func(_ context.Context, e events.Event) {
		if end, ok := e.(events.ToolExecutionEnd); ok {
			fmt.Printf("%s %s: %s\n", end.ToolCallID, end.Outcome, providers.TextOf(end.Result.Content))
		}
	}}
	cfg := loop.Config{Provider: model, Model: providers.Model{ID: "scripted"},
		Limits: loop.Limits{MaxTurns: 5},
		Hooks:  []loop.Hooks{observer, shout, noSecrets}}
	if _, err := loop.Run(context.Background(), []providers.Message{providers.NewUserText("echo twice")}, loop.Conversation{Tools: []*tools.Tool{echo}}, cfg, nil); err != nil {
		panic(err)
	}
	// Output:
	// c2 blocked: not that one
	// c1 ok: hello!
}
