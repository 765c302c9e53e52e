// Command custom-provider shows how small a providers.Provider can be: this
// one "answers" by reversing the user's words, streaming them one at a
// time with kit.Builder, and honours cancellation.
//
//	go run ./examples/custom-provider
package main

import (
	"context"
	"fmt"
	"iter"
	"os"
	"slices"
	"strings"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/events/term"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/kit"
)

// API is the Model.API of the models Reverser serves.
const API = "reverse-words"

// Reverser is a Provider that reverses the last user message word by word.
type Reverser struct{}

// Model returns the model called id as Reverser serves it, so that its API
// and provider agree with the Provider it is sent to.
func (Reverser) Model(id string) providers.Model {
	return providers.Model{ID: id, API: API, Provider: "example"}
}

// Stream implements providers.Provider.
func (Reverser) Stream(ctx context.Context, req *providers.Request) (iter.Seq[providers.StreamEvent], error) {
	// A Model no server could serve (no ID, another API) is refused
	// before anything is sent.
	m, err := kit.ResolveModel(req.Model, API, "example")
	if err != nil {
		return nil, fmt.Errorf("reverser: %w", err)
	}
	var last string
	for _, m := range slices.Backward(req.Messages) {
		if u, ok := m.(providers.UserMessage); ok {
			last = u.Text()
			break
		}
	}
	return func(yield func(providers.StreamEvent) bool) {
		b := kit.NewBuilder(m)
		if !yield(b.Start()) || !yield(b.TextStart()) {
			return
		}
		words := strings.Fields(last)
		slices.Reverse(words)
		for i, w := range words {
			if ctx.Err() != nil { // a cancelled run ends with stop reason aborted
				yield(b.Fail(providers.StopReasonAborted, providers.AbortedMessage, providers.Usage{}))
				return
			}
			if i > 0 {
				w = " " + w
			}
			if !yield(b.TextDelta(w)) {
				return
			}
		}
		if yield(b.TextEnd()) {
			yield(b.Done(providers.StopReasonStop, providers.Usage{Input: len(last) / 4, Output: len(last) / 4}))
		}
	}, nil
}

func main() {
	p := Reverser{}
	a, err := agent.New(agent.Options{Config: loop.Config{Provider: p, Model: p.Model("reverser-1")}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	a.Subscribe(term.New(os.Stdout).Handle)
	if err := a.Prompt(context.Background(), providers.NewUserText("providers are just iterators of events")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println()
}
