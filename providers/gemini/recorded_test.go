package gemini

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/internal/recorded"
	"github.com/agentloop/agentloop/providers"
)

var testModel = providers.Model{ID: "gemini-test", API: API, Provider: "google", Reasoning: true}

func newProvider(t *testing.T, url string, opts Options) *Provider {
	t.Helper()
	if opts.APIKey == "" {
		opts.APIKey = "k"
	}
	opts.BaseURL = url
	if opts.MaxRetries == 0 {
		opts.MaxRetries = -1
	}
	p, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

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

// TestRecordedStreams plays every Gemini stream recorded from the live
// service (and Vertex) through the provider, in pieces of 1 to 97 bytes,
// and checks text, thought summaries, thought signatures on the part they
// came with, function calls, finish reason, usage and block order.
func TestRecordedStreams(t *testing.T) {
	for _, rec := range recorded.NativeRecordings(t, "gemini") {
		t.Run(rec.Name, func(t *testing.T) {
			srv, requests := recorded.Serve(t, rec.Body, func(r *http.Request) {
				if !strings.HasSuffix(r.URL.Path, "/models/gemini-test:streamGenerateContent") || r.Header.Get("X-Goog-Api-Key") != "k" {
					t.Errorf("request %s with key %q", r.URL.Path, r.Header.Get("X-Goog-Api-Key"))
				}
			})
			evs := collect(t, context.Background(), newProvider(t, srv.URL, Options{}), nil)
			if *requests != 1 {
				t.Fatalf("%d requests", *requests)
			}
			recorded.Check(t, evs[len(evs)-1].Message, rec.Expect, false)
		})
	}
}
