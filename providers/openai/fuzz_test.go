package openai

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/providers"
)

// bodyTransport answers every request with a fixed SSE body, without a
// network.
type bodyTransport []byte

func (b bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(b)), Request: r}, nil
}

// FuzzSSE feeds arbitrary bytes as the SSE body of a response: the provider
// must end every stream with exactly one done or error event, never panic,
// and keep tool-call arguments in the message.
func FuzzSSE(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.sse"))
	for _, file := range files {
		b, _ := os.ReadFile(file)
		f.Add(b)
	}
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":3}]}}]}\n\ndata: [DONE]\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		in := bytes.Clone(body)
		p := New(Options{APIKey: "k", BaseURL: "http://fuzz.invalid/v1", HTTPOptions: providers.HTTPOptions{MaxRetries: -1, Client: &http.Client{Transport: bodyTransport(body)}}})
		seq, _ := p.Stream(context.Background(), &providers.Request{Model: testModel, Messages: []providers.Message{providers.NewUserText("x")}})
		ends := 0
		var last providers.StreamEvent
		for e := range seq {
			if e.Type == providers.StreamDone || e.Type == providers.StreamError {
				ends++
			}
			last = e
		}
		if ends != 1 || (last.Type != providers.StreamDone && last.Type != providers.StreamError) {
			t.Fatalf("%d final events, last %s", ends, last.Type)
		}
		if last.Type == providers.StreamError && strings.TrimSpace(last.Message.ErrorMessage) == "" {
			t.Fatal("error without a message")
		}
		if !bytes.Equal(in, body) {
			t.Fatal("input mutated")
		}
	})
}
