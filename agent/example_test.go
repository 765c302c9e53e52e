package agent_test

import (
	"context"
	"fmt"
	"strconv"

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

// An agent with a tool, a policy hook and a subscriber, on the scripted
// provider. The model calls add twice (once with a number as a string,
// which is coerced), the policy refuses the call with a negative number,
// and the model answers.
func Example() {
	add := tools.Must(tools.New(tools.Config{Name: "add", Description: "Add two integers"},
		func(ctx context.Context, in addArgs) (string, error) {
			return strconv.Itoa(in.A + in.B), nil
		}))
	model := faux.New(
		faux.Reply(faux.Call("c1", "add", map[string]any{"a": 2, "b": "3"}), faux.Call("c2", "add", map[string]any{"a": -1, "b": 1})),
		faux.Reply(faux.Text("2 + 3 = 5")),
	)
	noNegatives := func(_ context.Context, c loop.BeforeCall) (loop.BeforeResult, error) {
		in, err := tools.Decode[addArgs](c.Args)
		if err != nil || in.A < 0 || in.B < 0 {
			return loop.BeforeResult{Block: true, Reason: "negative numbers are not allowed"}, nil
		}
		return loop.BeforeResult{}, nil
	}
	a, err := agent.New(agent.Options{
		Config: loop.Config{Provider: model, Model: providers.Model{ID: "scripted", Provider: "faux"}, Hooks: []loop.Hooks{{BeforeToolCall: noNegatives}}},
		Tools:  []*tools.Tool{add},
	})
	if err != nil {
		panic(err)
	}
	a.Subscribe(func(_ context.Context, e events.Event) {
		if end, ok := e.(events.ToolExecutionEnd); ok {
			fmt.Printf("%s -> %s (error: %v)\n", end.ToolCallID, providers.TextOf(end.Result.Content), end.IsError)
		}
	})
	if err := a.Prompt(context.Background(), providers.NewUserText("What is 2 + 3?")); err != nil {
		fmt.Println("the run failed:", err)
		return
	}
	msgs := a.State().Messages
	fmt.Println(msgs[len(msgs)-1].(providers.AssistantMessage).Text())
	// Output:
	// c2 -> negative numbers are not allowed (error: true)
	// c1 -> 5 (error: false)
	// 2 + 3 = 5
}

// Prompt returns the run's error: a *loop.RunError when the run ended
// failed or aborted, with the transcript still holding what happened.
func ExampleAgent_Prompt_errors() {
	a, _ := agent.New(agent.Options{Config: loop.Config{Provider: faux.New(), Model: providers.Model{ID: "scripted"}}})
	err := a.Prompt(context.Background(), providers.NewUserText("hello?"))
	fmt.Println(err)
	fmt.Println(len(a.State().Messages), "messages")
	// Output:
	// loop: run failed: no scripted response left
	// 2 messages
}

// Configure is the one way to change options between runs: the function
// edits a copy, and the agent takes it only when New would.
func ExampleAgent_Configure() {
	model := faux.New(faux.Reply(faux.Text("a")), faux.Reply(faux.Text("b")))
	a, _ := agent.New(agent.Options{Config: loop.Config{Provider: model, Model: providers.Model{ID: "small"}}})
	_ = a.Prompt(context.Background(), providers.NewUserText("first"))

	err := a.Configure(func(o *agent.Options) {
		o.Model = providers.Model{ID: "large"}
		o.SystemPrompt = "Answer in one word."
	})
	fmt.Println(err, a.State().Model.ID, a.State().SystemPrompt)

	err = a.Configure(func(o *agent.Options) { o.Tools = append(o.Tools, nil) })
	fmt.Println(err)
	fmt.Println(len(a.State().Tools), "tools")
	// Output:
	// <nil> large Answer in one word.
	// agent: tool 0: tools: the Tool was not built by tools.New or tools.NewJSON
	// 0 tools
}

// Messages pushed on the follow-up queue start another turn when the run
// would otherwise end.
func ExampleQueue() {
	model := faux.New(faux.Reply(faux.Text("Oslo: 4°C")), faux.Reply(faux.Text("Bergen: 7°C")))
	a, _ := agent.New(agent.Options{Config: loop.Config{Provider: model, Model: providers.Model{ID: "scripted"}}})
	a.FollowUps().Push(providers.NewUserText("And Bergen?"))
	fmt.Println(a.FollowUps().Len(), "waiting")
	_ = a.Prompt(context.Background(), providers.NewUserText("Weather in Oslo?"))
	for _, m := range a.State().Messages {
		fmt.Printf("%s: %s\n", m.Role(), providers.TextOf(contentOf(m)))
	}
	// Output:
	// 1 waiting
	// user: Weather in Oslo?
	// assistant: Oslo: 4°C
	// user: And Bergen?
	// assistant: Bergen: 7°C
}

func contentOf(m providers.Message) []providers.Content {
	switch m := m.(type) {
	case providers.UserMessage:
		return m.Content
	case providers.AssistantMessage:
		return m.Content
	}
	return nil
}
