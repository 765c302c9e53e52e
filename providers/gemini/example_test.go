package gemini_test

import (
	"context"
	"fmt"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/gemini"
)

// An agent on Gemini: thought summaries stream as thinking, and thought
// signatures go back with the calls they came with.
func Example() {
	ctx := context.Background()
	p, err := gemini.New(ctx, gemini.Options{}) // the key from GEMINI_API_KEY
	if err != nil {
		panic(err)
	}
	a, err := agent.New(agent.Options{
		Config: loop.Config{Provider: p, Model: p.Model("gemini-2.5-flash")},
	})
	if err != nil {
		panic(err)
	}
	if err := a.Prompt(ctx, providers.NewUserText("Say hello.")); err != nil {
		fmt.Println(err)
	}
}
