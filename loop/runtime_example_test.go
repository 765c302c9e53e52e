package loop_test

import (
	"context"
	"fmt"
	"time"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

// frozen is the smallest Runtime: a clock that never moves and bodies run
// one after another on the run's goroutine. On a clock that never moves no
// deadline passes, so a body is always waited for: a run under it starts
// no goroutine and reads no clock, and its messages are the same every
// time it is played.
type frozen struct{ at time.Time }

func (f frozen) Now() time.Time { return f.at }

func (frozen) Fan(n, _ int, body func(int)) {
	for i := n - 1; i >= 0; i-- { // any order will do: here, the last first
		body(i)
	}
}

func (frozen) WithTimeout(ctx context.Context, _ time.Duration) (context.Context, context.CancelFunc) {
	return context.WithCancel(ctx)
}

func (frozen) Await(_ time.Duration, body func()) bool {
	body()
	return true
}

// A run driven by a Runtime of one's own: the bodies of the parallel batch
// run in the order it chose, and every message is stamped by its clock.
func ExampleRuntime() {
	echo := tools.Must(tools.New(tools.Config{Name: "echo", Description: "Echo the text"}, func(_ context.Context, in echoArgs) (tools.Result, error) {
		return tools.TextResult(in.Text), nil
	}))
	model := faux.New(faux.Reply(
		faux.Call("c1", "echo", map[string]any{"text": "one"}),
		faux.Call("c2", "echo", map[string]any{"text": "two"}),
	), faux.Reply(faux.Text("done")))
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	cfg := loop.Config{Provider: model, Model: providers.Model{ID: "scripted"}, Runtime: frozen{at}}
	msgs, err := loop.Run(context.Background(), []providers.Message{providers.NewUserText("echo twice")}, loop.Conversation{Tools: []*tools.Tool{echo}}, cfg,
		func(_ context.Context, e events.Event) {
			if end, ok := e.(events.ToolExecutionEnd); ok {
				fmt.Println(end.ToolCallID, end.Result.Text())
			}
		})
	if err != nil {
		panic(err)
	}
	last := msgs[len(msgs)-1].(providers.AssistantMessage)
	fmt.Println(providers.TextOf(last.Content), time.UnixMilli(last.Timestamp).UTC())
	// Output:
	// c2 two
	// c1 one
	// done 2030-01-02 03:04:05 +0000 UTC
}
