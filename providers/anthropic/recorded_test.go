package anthropic

import (
	"context"
	"net/http"
	"testing"

	"github.com/agentloop/agentloop/internal/harness/recorded"
	"github.com/agentloop/agentloop/providers"
)

var testModel = providers.Model{ID: "claude-test", API: API, Provider: "anthropic", Reasoning: true}

// TestRecordedStreams plays every Anthropic stream recorded from the live
// service (and Vertex's partner endpoint) through the provider, in pieces
// of 1 to 97 bytes, and checks text, thinking with its signature, redacted
// thinking, tool calls, stop reason, usage (cache reads and writes) and
// block order. The pause_turn recording is answered by itself again, so
// the continuation is exercised too.
func TestRecordedStreams(t *testing.T) {
	for _, rec := range recorded.NativeRecordings(t, "anthropic") {
		t.Run(rec.Name, func(t *testing.T) {
			srv, requests := recorded.Serve(t, rec.Body, func(r *http.Request) {
				if r.URL.Path != "/v1/messages" || r.Header.Get("Authorization") != "Bearer k" {
					t.Errorf("request %s with authorization %q", r.URL.Path, r.Header.Get("Authorization"))
				}
			})
			p := New(Options{APIKey: "k", BaseURL: srv.URL, MaxContinuations: -1, HTTPOptions: providers.HTTPOptions{MaxRetries: -1}})
			evs := recorded.Collect(t, context.Background(), p, recorded.Hi(testModel))
			if *requests != 1 {
				t.Fatalf("%d requests", *requests)
			}
			recorded.Check(t, evs[len(evs)-1].Message, rec.Expect, true)
		})
	}
}
