package openai

import (
	"context"
	"net/http"
	"testing"

	"github.com/agentloop/agentloop/internal/recorded"
	"github.com/agentloop/agentloop/providers"
)

var responsesModel = providers.Model{ID: "gpt-test", API: ResponsesAPI, Provider: "openai", Reasoning: true}

func collectResponses(t *testing.T, ctx context.Context, p *Responses, req *providers.Request) []providers.StreamEvent {
	t.Helper()
	if req == nil {
		req = &providers.Request{Model: responsesModel, Messages: []providers.Message{providers.NewUserText("hi")}}
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
			evs := collectResponses(t, context.Background(), p, nil)
			if *requests != 1 {
				t.Fatalf("%d requests", *requests)
			}
			recorded.Check(t, evs[len(evs)-1].Message, rec.Expect, true)
		})
	}
}
