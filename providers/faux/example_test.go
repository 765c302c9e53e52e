package faux_test

import (
	"context"
	"fmt"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
)

func Example() {
	model := faux.New(
		faux.Reply(faux.Text("Checking."), faux.Call("c1", "read", map[string]any{"path": "a.go"})),
		faux.Reply(faux.Text("Done.")),
	)
	seq, _ := model.Stream(context.Background(), &providers.Request{Messages: []providers.Message{providers.NewUserText("hi")}})
	for e := range seq {
		if e.Type == providers.StreamDone {
			fmt.Println(e.Reason, e.Message.Text(), e.Message.ToolCalls()[0].Name)
		}
	}
	fmt.Println(model.Pending(), "response left;", len(model.Requests()), "request recorded")
	// Output:
	// toolUse Checking. read
	// 1 response left; 1 request recorded
}
