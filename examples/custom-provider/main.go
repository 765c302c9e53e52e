// Command custom-provider shows how small a providers.Provider can be: this
// one "answers" by reversing the user's words, streaming them one at a
// time with providers.Builder, and honours cancellation.
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
)

// Reverser is a Provider that reverses the last user message word by word.
type Reverser struct{}

// Stream implements providers.Provider.
func (Reverser) Stream(ctx context.Context, req *providers.Request) (iter.Seq[providers.StreamEvent], error) {
	var last string
	for _, m := range slices.Backward(req.Messages) {
		if u, ok := m.(providers.UserMessage); ok {
			last = u.Text()
			break
		}
	}
	return func(yield func(providers.StreamEvent) bool) {
		b := providers.NewBuilder(req.Model)
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
	a, err := agent.New(agent.Options{Config: loop.Config{Provider: Reverser{}, Model: providers.Model{ID: "reverser-1", Provider: "example"}}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	a.Subscribe(term.New(os.Stdout).Handle)
	if err := a.Prompt(context.Background(), "providers are just iterators of events"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println()
}
