package gemini

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/internal/harness/recorded"
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
			evs := recorded.Collect(t, context.Background(), newProvider(t, srv.URL, Options{}), recorded.Hi(testModel))
			if *requests != 1 {
				t.Fatalf("%d requests", *requests)
			}
			recorded.Check(t, evs[len(evs)-1].Message, rec.Expect, false)
		})
	}
}
