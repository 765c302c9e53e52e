package auto

import (
	"context"
	"testing"
)

// TestFromEnv: with no name, the first provider whose key is set; a named
// one only with its key; offline and unknown names as documented.
func TestFromEnv(t *testing.T) {
	for _, k := range []string{"ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"} {
		t.Setenv(k, "")
	}
	ctx := context.Background()
	if _, _, ok, err := FromEnv(ctx, ""); ok || err != nil {
		t.Fatalf("no keys: ok %v, err %v", ok, err)
	}
	t.Setenv("OPENAI_API_KEY", "sk-o")
	t.Setenv("GEMINI_API_KEY", "g-k")
	if p, m, ok, _ := FromEnv(ctx, ""); !ok || p == nil || m.API != "google-generative-ai" {
		t.Fatalf("picked %+v", m)
	}
	if _, m, ok, _ := FromEnv(ctx, OpenAIResponses); !ok || m.API != "openai-responses" {
		t.Fatalf("named: %+v", m)
	}
	if p, _, ok, _ := FromEnv(ctx, Anthropic); ok || p != nil {
		t.Fatal("anthropic without its key")
	}
	if _, _, ok, _ := FromEnv(ctx, Offline); ok {
		t.Fatal("offline")
	}
	if _, _, _, err := FromEnv(ctx, "cohere"); err == nil {
		t.Fatal("an unknown name was accepted")
	}
}

// TestGeminiKeyVariables: Gemini is picked by either variable its
// provider reads its key from, GEMINI_API_KEY first.
func TestGeminiKeyVariables(t *testing.T) {
	tests := []struct{ gemini, google string }{
		{"g-k", ""},
		{"", "goog-k"},
		{"g-k", "goog-k"},
	}
	for _, tt := range tests {
		for _, k := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY"} {
			t.Setenv(k, "")
		}
		t.Setenv("GEMINI_API_KEY", tt.gemini)
		t.Setenv("GOOGLE_API_KEY", tt.google)
		for _, name := range []string{"", Gemini} {
			if p, m, ok, err := FromEnv(context.Background(), name); !ok || p == nil || err != nil || m.API != "google-generative-ai" {
				t.Errorf("%+v, name %q: ok %v, %+v, %v", tt, name, ok, m, err)
			}
		}
	}
}
