package console

import (
	"os"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/openai"
)

// Backend picks the model for an example: an OpenAI-compatible endpoint
// when OPENAI_API_KEY is set (OPENAI_BASE_URL and OPENAI_MODEL are
// optional), otherwise the scripted fallback. online reports which.
func Backend(scripted providers.Provider) (p providers.Provider, m providers.Model, online bool) {
	if os.Getenv("OPENAI_API_KEY") == "" {
		return scripted, providers.Model{ID: "scripted", API: "faux", Provider: "faux"}, false
	}
	name := os.Getenv("OPENAI_MODEL")
	if name == "" {
		name = "gpt-4o-mini"
	}
	return openai.New(openai.Options{}), providers.Model{ID: name, API: "openai-completions", Provider: "openai", ContextWindow: 128000}, true
}
