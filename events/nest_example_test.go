package events_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

type question struct {
	Q string `json:"q"`
}

// A tool whose body runs a child run: the child publishes on the parent's
// bus through Nest, so every event says which run it is from (its path)
// and where it stands in that run (its Seq), and SeqCheck finds no gap.
// A streamed message's updates are numbered under its message_start.
func ExampleNest() {
	var bus events.Bus
	var check events.SeqCheck
	bus.Subscribe(func(_ context.Context, e events.Event) {
		if err := check.Check(e); err != nil {
			fmt.Println(err)
		}
		env := events.EnvelopeOf(e)
		what := string(e.Type())
		if u, ok := e.(events.MessageUpdate); ok {
			what = "  " + string(u.Stream.Type)
		}
		fmt.Printf("%-4s %-5s %s\n", "/"+strings.Join(env.Path, "/"), env.Seq, what)
	})

	child := faux.New(faux.Reply(faux.Text("42")))
	ask := tools.Must(tools.New(tools.Config{Name: "ask"}, func(ctx context.Context, in question) (tools.Result, error) {
		msgs, err := loop.Run(ctx, []providers.Message{providers.NewUserText(in.Q)}, loop.Conversation{},
			loop.Config{Provider: child}, events.Nest(bus.Handle, tools.CallID(ctx)))
		if err != nil {
			return tools.Result{}, err
		}
		return tools.TextResult(msgs[len(msgs)-1].(providers.AssistantMessage).Text()), nil
	}))
	parent := faux.New(faux.Reply(faux.Call("c1", "ask", map[string]any{"q": "?"})), faux.Reply(faux.Text("42")))
	_, _ = loop.Run(context.Background(), []providers.Message{providers.NewUserText("go")},
		loop.Conversation{Tools: []*tools.Tool{ask}}, loop.Config{Provider: parent}, bus.Handle)
	// Output:
	// /    1     agent_start
	// /    2     turn_start
	// /    3     message_start
	// /    4     message_end
	// /    5     message_start
	// /    5.1     toolcall_start
	// /    5.2     toolcall_delta
	// /    5.3     toolcall_delta
	// /    5.4     toolcall_delta
	// /    5.5     toolcall_end
	// /    6     message_end
	// /    7     tool_execution_start
	// /c1  1     agent_start
	// /c1  2     turn_start
	// /c1  3     message_start
	// /c1  4     message_end
	// /c1  5     message_start
	// /c1  5.1     text_start
	// /c1  5.2     text_delta
	// /c1  5.3     text_end
	// /c1  6     message_end
	// /c1  7     turn_end
	// /c1  8     agent_end
	// /    8     tool_execution_end
	// /    9     message_start
	// /    10    message_end
	// /    11    turn_end
	// /    12    turn_start
	// /    13    message_start
	// /    13.1    text_start
	// /    13.2    text_delta
	// /    13.3    text_end
	// /    14    message_end
	// /    15    turn_end
	// /    16    agent_end
}
