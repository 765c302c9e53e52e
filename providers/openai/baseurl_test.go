package openai

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/internal/httpx"
	"github.com/agentloop/agentloop/providers"
)

// TestBaseURLFromEnvRefused: a malformed OPENAI_BASE_URL is refused by
// Stream, before any request, saying where it came from; both APIs.
func TestBaseURLFromEnvRefused(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "localhost:11434/v1")
	for _, p := range []providers.Provider{New(Options{APIKey: "k"}), NewResponses(Options{APIKey: "k"})} {
		_, err := p.Stream(context.Background(), &providers.Request{Model: providers.Model{ID: "m"}})
		if !errors.Is(err, httpx.ErrBaseURL) || !strings.Contains(err.Error(), "(from OPENAI_BASE_URL)") || !strings.HasPrefix(err.Error(), "openai: ") {
			t.Fatalf("%T: %v", p, err)
		}
	}
}
