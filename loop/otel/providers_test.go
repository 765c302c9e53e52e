package otel

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentloop/agentloop/internal/harness/recorded"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/anthropic"
	"github.com/agentloop/agentloop/providers/openai"
)

// spanOfRequest is an HTTP client transport that notes the span each
// request's context carries, as otelhttp would take it for its parent.
type spanOfRequest struct {
	mu    sync.Mutex
	spans []trace.SpanContext
}

func (s *spanOfRequest) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.spans = append(s.spans, trace.SpanContextFromContext(r.Context()))
	s.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// TestProviderRequestNestsUnderChat: the provider's HTTP request carries
// its chat span, so an instrumented client's span nests under it.
func TestProviderRequestNestsUnderChat(t *testing.T) {
	rec := newRecorded(Options{})
	s := recorded.NewScript(t, recorded.Reply{Body: "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"})
	seen := &spanOfRequest{}
	p := openai.New(openai.Options{APIKey: "k", BaseURL: s.URL, HTTPOptions: providers.HTTPOptions{Client: &http.Client{Transport: seen}}})
	cfg := instrument(rec.tracer, loop.Config{Provider: p, Model: providers.Model{ID: "gpt", Provider: "openai"}})
	if _, err := loop.Run(context.Background(), []providers.Message{providers.NewUserText("hi")}, loop.Conversation{}, cfg, nil); err != nil {
		t.Fatal(err)
	}
	chats := byName(rec.spans.Ended(), "chat ")
	if len(chats) != 1 || len(seen.spans) != 1 || seen.spans[0].SpanID() != chats[0].SpanContext().SpanID() {
		t.Fatalf("%d chat spans; the request carried %v", len(chats), seen.spans)
	}
}

// TestOneChatSpanPerCall: with a global tracer provider set, the Anthropic
// SDK would start a span of its own per request; the provider turns it
// off, so a model call is one chat span, not two.
func TestOneChatSpanPerCall(t *testing.T) {
	rec := newRecorded(Options{})
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(rec.tracer.opts.TracerProvider)
	defer otel.SetTracerProvider(prev)
	body := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	s := recorded.NewScript(t, recorded.Reply{Body: body})
	cfg := instrument(rec.tracer, loop.Config{Provider: anthropic.New(anthropic.Options{APIKey: "k", BaseURL: s.URL}),
		Model: providers.Model{ID: "claude", API: anthropic.API, Provider: "anthropic"}})
	if _, err := loop.Run(context.Background(), []providers.Message{providers.NewUserText("hi")}, loop.Conversation{}, cfg, nil); err != nil {
		t.Fatal(err)
	}
	spans := rec.spans.Ended()
	var names []string
	for _, sp := range spans {
		names = append(names, sp.Name())
	}
	if len(spans) != 2 || len(byName(spans, "chat ")) != 1 {
		t.Fatalf("spans %v, want one run and one chat", names)
	}
}
