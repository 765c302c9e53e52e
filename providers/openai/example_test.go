package openai_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

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

// Where the key comes from: the provider owns a fixed key (Options.APIKey,
// else OPENAI_API_KEY); a key that expires or rotates comes from a
// GetAPIKey hook, asked before every model call, and wins
// (providers.Request.APIKey states the rule).
func Example_keys() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println(r.Header.Get("Authorization")) // a real server checks it
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	p := openai.New(openai.Options{BaseURL: srv.URL, APIKey: "sk-fixed"})
	hi := []providers.Message{providers.NewUserText("hi")}

	cfg := loop.Config{Provider: p, Model: p.Model("gpt-4o-mini")}
	if _, err := loop.Run(context.Background(), hi, loop.Conversation{}, cfg, nil); err != nil {
		fmt.Println(err)
	}

	n := 0
	cfg.Hooks = []loop.Hooks{{GetAPIKey: func(context.Context, string) (string, error) {
		n++ // fetch a fresh short-lived key here
		return fmt.Sprint("sk-short-lived-", n), nil
	}}}
	if _, err := loop.Run(context.Background(), hi, loop.Conversation{}, cfg, nil); err != nil {
		fmt.Println(err)
	}
	// Output:
	// Bearer sk-fixed
	// Bearer sk-short-lived-1
}
