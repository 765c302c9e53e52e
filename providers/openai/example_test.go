package openai_test

import (
	"context"
	"fmt"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/openai"
)

// An agent against a local Ollama server. For OpenAI itself leave BaseURL
// empty and set OPENAI_API_KEY; for vLLM or llama.cpp's server point
// BaseURL at their /v1.
func Example() {
	p := openai.New(openai.Options{
		BaseURL: "http://localhost:11434/v1",
		APIKey:  "ollama", // local servers accept any key
	})
	model := p.Model("qwen3:8b") // the model's API and provider are the provider's
	model.ContextWindow = 32768
	a, err := agent.New(agent.Options{
		Config: loop.Config{Provider: p, Model: model},
	})
	if err != nil {
		panic(err)
	}
	if err := a.Prompt(context.Background(), providers.NewUserText("Say hello.")); err != nil {
		fmt.Println(err)
	}
}

// An agent on the Responses API: reasoning models keep their encrypted
// reasoning from turn to turn without the server storing anything.
func ExampleNewResponses() {
	p := openai.NewResponses(openai.Options{}) // the key from OPENAI_API_KEY
	a, err := agent.New(agent.Options{
		Config: loop.Config{Provider: p, Model: p.Model("gpt-5-mini"), // a reasoning model, by its name
			RequestOptions: providers.RequestOptions{Reasoning: "low"}},
	})
	if err != nil {
		panic(err)
	}
	if err := a.Prompt(context.Background(), providers.NewUserText("Say hello.")); err != nil {
		fmt.Println(err)
	}
}
