package events_test

import (
	"context"
	"fmt"

	"github.com/agentloop/agentloop/events"
)

func ExampleBus() {
	var bus events.Bus
	unsubscribe := bus.Subscribe(func(_ context.Context, e events.Event) {
		b, _ := events.Marshal(e)
		fmt.Println(string(b))
	})
	defer unsubscribe()

	bus.Handle(context.Background(), events.ToolExecutionStart{ToolCallID: "c1", ToolName: "read", Args: map[string]any{"path": "a.go"}})
	// Output:
	// {"type":"tool_execution_start","toolCallId":"c1","toolName":"read","args":{"path":"a.go"}}
}

// A consumer on its own goroutine: when it falls behind, the publisher
// waits for it rather than dropping events.
func ExampleBus_Channel() {
	var bus events.Bus
	ch, cancel := bus.Channel(16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e := range ch {
			fmt.Println(e.Type())
		}
	}()
	bus.Handle(context.Background(), events.AgentStart{})
	bus.Handle(context.Background(), events.AgentEnd{})
	cancel()
	<-done
	// Output:
	// agent_start
	// agent_end
}
