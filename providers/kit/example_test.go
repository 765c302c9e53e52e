package kit_test

import (
	"fmt"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/kit"
)

// A provider streams its answer through a Builder: each event can give the
// message as it stood, and the last carries it whole.
func ExampleBuilder() {
	b := kit.NewBuilder(providers.Model{ID: "m-1", API: "example", Provider: "example"})
	events := []providers.StreamEvent{b.Start(), b.TextDelta("Hello"), b.TextDelta(", world"), b.TextEnd()}
	events = append(events, b.Done(providers.StopReasonStop, providers.Usage{Output: 2}))
	for _, e := range events {
		fmt.Printf("%s %q\n", e.Type, e.Partial().Text())
	}
	// Output:
	// start ""
	// text_delta "Hello"
	// text_delta "Hello, world"
	// text_end "Hello, world"
	// done "Hello, world"
}

// A transcript cut short by a cancelled run, prepared for the server: the
// call left without a result gets a stand-in, so the server accepts it.
func ExampleTarget_Prepare() {
	m := providers.Model{ID: "m-1", API: "example", Provider: "example"}
	transcript := []providers.Message{
		providers.NewUserText("What is in notes.txt?"),
		providers.AssistantMessage{API: m.API, Provider: m.Provider, Model: m.ID, StopReason: providers.StopReasonToolUse,
			Content: []providers.Content{providers.ToolCall{ID: "c1", Name: "read", Arguments: map[string]any{"path": "notes.txt"}}}},
	}
	for _, msg := range kit.TargetOf(m).Prepare(transcript) {
		fmt.Println(msg.Role())
		if r, ok := msg.(providers.ToolResultMessage); ok {
			fmt.Println(r.ToolCallID, r.IsError, r.Text())
		}
	}
	// Output:
	// user
	// assistant
	// toolResult
	// c1 true Tool call was not completed: the run was cancelled before it returned a result.
}
