// Package auto picks a provider from the environment, for programs that
// run against whichever model their user has a key for, and offline
// otherwise. Importing it links every provider this module has (and their
// SDKs); a program that uses one provider imports that one instead.
//
//	p, m, ok, err := auto.FromEnv(ctx, *flagProvider) // "" picks by key
//	if err != nil { ... }                              // an unknown name
//	if !ok { /* no key: use a scripted provider (providers/faux) */ }
//
// Names lists what FromEnv takes: anthropic, gemini, openai,
// openai-responses, offline. examples/chat uses it when built with the tag
// allproviders (go run -tags allproviders ./examples/chat -provider gemini);
// that build compiles every SDK, so its first build is several times
// slower and larger than one provider's.
package auto

import (
	"context"
	"fmt"
	"os"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/anthropic"
	"github.com/agentloop/agentloop/providers/gemini"
	"github.com/agentloop/agentloop/providers/openai"
)

// The names FromEnv takes.
const (
	Anthropic       = "anthropic"        // ANTHROPIC_API_KEY, ANTHROPIC_MODEL
	Gemini          = "gemini"           // GEMINI_API_KEY (or GOOGLE_API_KEY), GEMINI_MODEL
	OpenAI          = "openai"           // OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL (Chat Completions)
	OpenAIResponses = "openai-responses" // the same variables, the Responses API
	Offline         = "offline"          // none: ok is always false
)

// Names lists the names FromEnv takes, in the order it tries them when
// given none.
var Names = []string{Anthropic, Gemini, OpenAI, OpenAIResponses, Offline}

// FromEnv returns the provider named, with its model, or for "" the first
// of Anthropic, Gemini and OpenAI (Chat Completions) whose key is set. ok is
// false when that provider's key is not set (or for Offline); err reports
// a name it does not know.
func FromEnv(ctx context.Context, name string) (p providers.Provider, m providers.Model, ok bool, err error) {
	switch name {
	case "":
		for _, n := range []string{Anthropic, Gemini, OpenAI} {
			if p, m, ok, _ := FromEnv(ctx, n); ok {
				return p, m, true, nil
			}
		}
		return nil, providers.Model{}, false, nil
	case Anthropic:
		p, m, ok := anthropic.FromEnv()
		return orNil(p, ok), m, ok, nil
	case Gemini:
		p, m, ok := gemini.FromEnv(ctx)
		return orNil(p, ok), m, ok, nil
	case OpenAI:
		p, m, ok := openai.FromEnv()
		return orNil(p, ok), m, ok, nil
	case OpenAIResponses:
		p, m, ok := openai.FromEnvResponses()
		return orNil(p, ok), m, ok, nil
	case Offline:
		return nil, providers.Model{}, false, nil
	}
	return nil, providers.Model{}, false, fmt.Errorf("auto: unknown provider %q (one of %v)", name, Names)
}

// orNil keeps a typed nil pointer from becoming a non-nil interface.
func orNil[P providers.Provider](p P, ok bool) providers.Provider {
	if !ok {
		return nil
	}
	return p
}

// Describe says which provider and model FromEnv picked, for a program's
// first line of output, without the key.
func Describe(m providers.Model) string {
	where := m.Provider
	if m.Provider == "openai" {
		if base := os.Getenv("OPENAI_BASE_URL"); base != "" {
			where = base
		}
	}
	return fmt.Sprintf("%s (%s, %s)", m.ID, where, m.API)
}
