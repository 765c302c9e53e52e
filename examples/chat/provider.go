//go:build !allproviders

package main

import (
	"fmt"
	"os"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/openai"
)

// providerNames lists what -provider takes in this build: OpenAI's two
// APIs (and any Chat Completions server). Built with -tags allproviders,
// the chat takes Anthropic and Gemini too (provider_all.go).
func providerNames() []string { return []string{"openai", "openai-responses", "offline"} }

// fromEnv returns the provider named, or for "" the OpenAI provider when
// OPENAI_API_KEY is set; ok is false without a key, or for "offline".
func fromEnv(name string) (p providers.Provider, m providers.Model, ok bool, err error) {
	switch name {
	case "", "openai":
		if p, m, ok := openai.FromEnv(); ok {
			return p, m, true, nil
		}
	case "openai-responses":
		if p, m, ok := openai.FromEnvResponses(); ok {
			return p, m, true, nil
		}
	case "offline":
	case "anthropic", "gemini":
		return nil, m, false, fmt.Errorf("%s needs the build tag allproviders, which links every provider's SDK: go run -tags allproviders ./examples/chat -provider %s", name, name)
	default:
		return nil, m, false, fmt.Errorf("unknown provider %q (one of %v)", name, providerNames())
	}
	return nil, m, false, nil
}

// describe says which model and endpoint fromEnv picked, without the key.
func describe(m providers.Model) string {
	where := "OpenAI's API"
	if base := os.Getenv("OPENAI_BASE_URL"); base != "" {
		where = base
	}
	return fmt.Sprintf("%s at %s (%s)", m.ID, where, m.API)
}
