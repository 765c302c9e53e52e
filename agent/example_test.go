package agent_test

import (
	"context"
	"fmt"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

type addArgs struct {
	A int `json:"a"`
	B int `json:"b"`
}

func Example() {
	add := tools.Must(tools.New("add", "Add two integers",
		func(ctx context.Context, id string, in addArgs, _ tools.UpdateFunc) (tools.Result, error) {
			return tools.TextResult(fmt.Sprint(in.A + in.B)), nil
		}))

	// A scripted model: it calls add (once with an argument the policy
	// refuses), then answers.
	model := faux.New(
		faux.Reply(faux.Call("c1", "add", map[string]any{"a": 2, "b": "3"}), faux.Call("c2", "add", map[string]any{"a": -1, "b": 1})),
		faux.Reply(faux.Text("2 + 3 = 5")),
	)
	a := agent.New(agent.Options{
		Provider: model,
		Model:    providers.Model{ID: "scripted", Provider: "faux"},
		Tools:    []*tools.Tool{add},
		BeforeToolCall: func(_ context.Context, c loop.BeforeToolCall) (loop.BeforeResult, error) {
			if c.Args.(map[string]any)["a"].(float64) < 0 {
				return loop.BeforeResult{Block: true, Reason: "negative numbers are not allowed"}, nil
			}
			return loop.BeforeResult{}, nil
		},
	})
	a.Subscribe(func(_ context.Context, e events.Event) {
		if end, ok := e.(events.ToolExecutionEnd); ok {
			fmt.Printf("%s -> %s (error: %v)\n", end.ToolCallID, providers.TextOf(end.Result.Content), end.IsError)
		}
	})
	if err := a.Prompt(context.Background(), "What is 2 + 3?"); err != nil {
		panic(err)
	}
	msgs := a.State().Messages
	fmt.Println(msgs[len(msgs)-1].(providers.AssistantMessage).Text())
	// Output:
	// c2 -> negative numbers are not allowed (error: true)
	// c1 -> 5 (error: false)
	// 2 + 3 = 5
}
