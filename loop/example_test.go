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
