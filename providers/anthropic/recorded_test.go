package anthropic

import (
	"context"
	"net/http"
	"testing"

	"github.com/agentloop/agentloop/internal/recorded"
	"github.com/agentloop/agentloop/providers"
)

var testModel = providers.Model{ID: "claude-test", API: API, Provider: "anthropic", Reasoning: true}

// collect runs one request and returns its events.
func collect(t *testing.T, ctx context.Context, p *Provider, req *providers.Request) []providers.StreamEvent {
	t.Helper()
	if req == nil {
		req = &providers.Request{Model: testModel, Messages: []providers.Message{providers.NewUserText("hi")}}
	}
	seq, err := p.Stream(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var evs []providers.StreamEvent
	for e := range seq {
		evs = append(evs, e)
	}
	if n := len(evs); n == 0 || (evs[n-1].Type != providers.StreamDone && evs[n-1].Type != providers.StreamError) {
		t.Fatalf("the stream did not end with done or error: %d events", n)
	}
	return evs
}

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
			evs := collect(t, context.Background(), p, nil)
			if *requests != 1 {
				t.Fatalf("%d requests", *requests)
			}
			recorded.Check(t, evs[len(evs)-1].Message, rec.Expect, true)
		})
	}
}
