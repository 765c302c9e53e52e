package openai

import (
	"context"
	"net/http"
	"testing"

	"github.com/agentloop/agentloop/internal/harness/recorded"
	"github.com/agentloop/agentloop/providers"
)

var responsesModel = providers.Model{ID: "gpt-test", API: ResponsesAPI, Provider: "openai", Reasoning: true}

// TestRecordedResponsesStreams plays every Responses API stream recorded
// from a live service (OpenAI, Azure, DeepSeek, OpenRouter) through the
// provider, in pieces of 1 to 97 bytes, and checks text, reasoning
// summaries and raw reasoning, the reasoning items kept whole (encrypted
// content included), function calls with their item ids, stop reason, the
// server's error, usage and block order.
func TestRecordedResponsesStreams(t *testing.T) {
	for _, rec := range recorded.NativeRecordings(t, "responses") {
		t.Run(rec.Name, func(t *testing.T) {
			srv, requests := recorded.Serve(t, rec.Body, func(r *http.Request) {
				if r.URL.Path != "/v1/responses" || r.Header.Get("Authorization") != "Bearer k" {
					t.Errorf("request %s with authorization %q", r.URL.Path, r.Header.Get("Authorization"))
				}
			})
			p := NewResponses(Options{APIKey: "k", BaseURL: srv.URL + "/v1", HTTPOptions: providers.HTTPOptions{MaxRetries: -1}})
			evs := recorded.Collect(t, context.Background(), p, recorded.Hi(responsesModel))
			if *requests != 1 {
				t.Fatalf("%d requests", *requests)
			}
			recorded.Check(t, evs[len(evs)-1].Message, rec.Expect, true)
		})
	}
}
