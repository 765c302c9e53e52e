package anthropic_test

import (
	"context"
	"fmt"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/anthropic"
)

// An agent on Claude with extended thinking: the thinking comes back with
// its signature, and prompt caching is on without asking.
func Example() {
	p := anthropic.New(anthropic.Options{}) // the key from ANTHROPIC_API_KEY
	model := p.Model("claude-sonnet-4-5")
	model.Reasoning, model.MaxTokens = true, 16000
	a, err := agent.New(agent.Options{
		Config: loop.Config{Provider: p,
			Model:          model,
			RequestOptions: providers.RequestOptions{Reasoning: "medium"}},
		SystemPrompt: "You are terse.",
	})
	if err != nil {
		panic(err)
	}
	if err := a.Prompt(context.Background(), providers.NewUserText("Say hello.")); err != nil {
		fmt.Println(err)
	}
}
