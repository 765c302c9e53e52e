package crossprovider

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentloop/agentloop/internal/harness/recorded"
	"github.com/agentloop/agentloop/internal/httpx"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/anthropic"
	"github.com/agentloop/agentloop/providers/gemini"
	"github.com/agentloop/agentloop/providers/kit"
	"github.com/agentloop/agentloop/providers/openai"
)

// mistakeKey is the key of these tests: no error may carry it.
const mistakeKey = "sk-mistake-0123456789abcdef"

// build makes the wire's provider for a base URL, returning the error a
// constructor reports (Gemini's) instead of failing.
func build(hw hostileWire, url string, o providers.HTTPOptions) (providers.Provider, error) {
	switch hw.name {
	case "chat":
		return openai.New(openai.Options{APIKey: mistakeKey, BaseURL: url, HTTPOptions: o}), nil
	case "responses":
		return openai.NewResponses(openai.Options{APIKey: mistakeKey, BaseURL: url, HTTPOptions: o}), nil
	case "anthropic":
		return anthropic.New(anthropic.Options{APIKey: mistakeKey, BaseURL: url, HTTPOptions: o}), nil
	case "gemini":
		return gemini.New(context.Background(), gemini.Options{APIKey: mistakeKey, BaseURL: url, HTTPOptions: o})
	}
	panic("unknown wire " + hw.name)
}

// modeler is what every provider of this module offers: the models it
// serves, their API and provider set.
type modeler interface {
	Model(id string) providers.Model
}

// refusal is the error a provider reports for a request it cannot make:
// from its constructor, or from Stream before any request.
func refusal(t *testing.T, hw hostileWire, url string, m providers.Model) error {
	t.Helper()
	p, err := build(hw, url, providers.HTTPOptions{})
	if err != nil {
		return err
	}
	seq, err := p.Stream(context.Background(), recorded.Hi(m))
	if err == nil {
		for e := range seq {
			if e.Type == providers.StreamError || e.Type == providers.StreamDone {
				t.Fatalf("streamed to the end: %s %q", e.Type, e.Message.ErrorMessage)
			}
		}
		t.Fatal("no error")
	}
	return err
}

// TestMalformedBaseURLRefused: a base URL no request could go to is refused
// before any request, on every wire, saying what is wrong with it and
// without the key or a secret of its query.
func TestMalformedBaseURLRefused(t *testing.T) {
	cases := []struct{ url, want string }{
		{"localhost:8080/v1", "http:// or https:// scheme"},
		{"api.openai.com/v1", "http:// or https:// scheme"},
		{"ftp://example.com/v1", "http:// or https:// scheme"},
		{"http://", "no host"},
		{"http:///v1", "no host"},
		{"http://:8080/v1", "no host"},
		{"http://localhost:99999/v1", "port"},
		{"http://localhost:0/v1", "port"},
		{"http://example.com/v1?key=" + mistakeKey, "query"},
		{"http://example.com/v1?token=hunter2-secret", "query"},
		{"http://example.com/v1#models", "fragment"},
		{"http://[::1/v1", "does not parse"},
		{"http://example.com/v1\n", "does not parse"},
		{" http://example.com/v1", "does not parse"},
		{"http://example.com/%zz", "does not parse"},
	}
	for _, hw := range hostileWires {
		for _, tc := range cases {
			t.Run(hw.name+"/"+tc.url, func(t *testing.T) {
				err := refusal(t, hw, tc.url, hw.model)
				msg := err.Error()
				if !errors.Is(err, httpx.ErrBaseURL) || !strings.Contains(msg, tc.want) {
					t.Fatalf("error %q, want ErrBaseURL saying %q", msg, tc.want)
				}
				if strings.Contains(msg, mistakeKey[8:]) || strings.Contains(msg, "hunter2") {
					t.Fatalf("a secret in the error: %q", msg)
				}
			})
		}
	}
}

// TestModelRefused: a zero Model, and one made for another API, are
// refused by Stream before any request, on every wire; a Model the
// provider made is sent and names the provider's API in its message.
func TestModelRefused(t *testing.T) {
	for i, hw := range hostileWires {
		other := hostileWires[(i+1)%len(hostileWires)].model
		t.Run(hw.name, func(t *testing.T) {
			var hits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				http.Error(w, "unexpected", http.StatusTeapot)
			}))
			defer srv.Close()
			for _, tc := range []struct {
				name string
				m    providers.Model
				want error
			}{
				{"zero", providers.Model{}, kit.ErrNoModel},
				{"API only", providers.Model{API: hw.model.API}, kit.ErrNoModel},
				{"another API", other, kit.ErrWrongAPI},
			} {
				err := refusal(t, hw, srv.URL, tc.m)
				if !errors.Is(err, tc.want) {
					t.Errorf("%s: error %v, want %v", tc.name, err, tc.want)
				}
				if tc.want == kit.ErrWrongAPI && (!strings.Contains(err.Error(), other.API) || !strings.Contains(err.Error(), hw.model.API)) {
					t.Errorf("%s: %q names neither API", tc.name, err)
				}
			}
			if p, err := build(hw, srv.URL, providers.HTTPOptions{}); err != nil {
				t.Fatal(err)
			} else if _, err := p.Stream(context.Background(), nil); err == nil {
				t.Error("a nil request: no error")
			}
			if n := hits.Load(); n != 0 {
				t.Fatalf("%d requests sent", n)
			}
			p, err := build(hw, srv.URL, providers.HTTPOptions{MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			m := p.(modeler).Model("m-1")
			if m.ID != "m-1" || m.API != hw.model.API || m.Provider != hw.model.Provider {
				t.Fatalf("Model: %+v, want the API and provider of %+v", m, hw.model)
			}
			evs := recorded.Collect(t, context.Background(), p, recorded.Hi(providers.Model{ID: "m-1"}))
			final := evs[len(evs)-1].Message
			if n := hits.Load(); n != 1 || final.API != hw.model.API || final.Provider != hw.model.Provider || final.Model != "m-1" {
				t.Fatalf("a Model with only an ID: %d requests, message from %q %q %q", n, final.API, final.Provider, final.Model)
			}
		})
	}
}

// wirePath is a piece of the path each wire's request goes to.
var wirePath = map[string]string{
	"chat":      "/chat/completions",
	"responses": "/responses",
	"anthropic": "/v1/messages",
	"gemini":    "/models/gemini-x:streamGenerateContent",
}

// TestStatusErrorNamesRequest: a base URL without the path the server
// wants (no /v1) gets a 404; the error names the method and the URL the
// request went to, is not retried, and carries no key.
func TestStatusErrorNamesRequest(t *testing.T) {
	for _, hw := range hostileWires {
		t.Run(hw.name, func(t *testing.T) {
			var hits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				http.NotFound(w, r) // "404 page not found", as a Go server without the route
			}))
			defer srv.Close()
			p, err := build(hw, srv.URL, providers.HTTPOptions{RetryBaseDelay: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			evs := recorded.Collect(t, context.Background(), p, recorded.Hi(hw.model))
			msg := evs[len(evs)-1].Message.ErrorMessage
			if !strings.HasPrefix(msg, "HTTP 404: ") || !strings.Contains(msg, "404 page not found (POST "+srv.URL+"/") ||
				!strings.Contains(msg, wirePath[hw.name]) || strings.Contains(msg, "\n") {
				t.Fatalf("error %q names no method and URL", msg)
			}
			if n := hits.Load(); n != 1 || strings.Contains(msg, "attempts") {
				t.Fatalf("%d requests (%q): a 404 is not retried", n, msg)
			}
			if strings.Contains(msg, mistakeKey[8:]) {
				t.Fatalf("the key in %q", msg)
			}
		})
	}
}

// TestRetriedErrorCountsAttempts: a server error that outlasts the retries
// ends the message saying how many attempts were made, and where to.
func TestRetriedErrorCountsAttempts(t *testing.T) {
	for _, hw := range hostileWires {
		t.Run(hw.name, func(t *testing.T) {
			var hits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusServiceUnavailable)
				body := hw.refusal("overloaded, try later")
				if hw.name == "gemini" { // Google's error names its status in the body too
					body = `{"error":{"code":503,"message":"overloaded, try later","status":"UNAVAILABLE"}}`
				}
				_, _ = w.Write([]byte(body))
			}))
			defer srv.Close()
			p, err := build(hw, srv.URL, providers.HTTPOptions{MaxRetries: 2, RetryBaseDelay: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			evs := recorded.Collect(t, context.Background(), p, recorded.Hi(hw.model))
			msg := evs[len(evs)-1].Message.ErrorMessage
			if n := hits.Load(); n != 3 {
				t.Fatalf("%d requests, want 3", n)
			}
			if !strings.Contains(msg, "HTTP 503") || !strings.Contains(msg, "overloaded, try later") ||
				!strings.Contains(msg, "(POST "+srv.URL+"/") || !strings.HasSuffix(msg, "; 3 attempts)") {
				t.Fatalf("error %q: want the status, the server's words, the request and 3 attempts", msg)
			}
		})
	}
}

// countingClient dials through a counter.
func countingClient(dials *atomic.Int32) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return d.DialContext(ctx, network, addr)
	}}}
}

// TestConnectionRefusedNotRetried: a port nothing listens on is tried
// once; the error says so, with the request it was.
func TestConnectionRefusedNotRetried(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	for _, hw := range hostileWires {
		t.Run(hw.name, func(t *testing.T) {
			var dials atomic.Int32
			// A retry would wait an hour: the test would time out, not pass.
			p, err := build(hw, url, providers.HTTPOptions{Client: countingClient(&dials), RetryBaseDelay: time.Hour, MaxRetryDelay: 2 * time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			evs := recorded.Collect(t, context.Background(), p, recorded.Hi(hw.model))
			msg := evs[len(evs)-1].Message.ErrorMessage
			if n := dials.Load(); n != 1 {
				t.Fatalf("%d dials, want 1", n)
			}
			if !strings.Contains(msg, "connection refused") || !strings.Contains(msg, "(POST "+url+"/") {
				t.Fatalf("error %q: want connection refused and the request", msg)
			}
		})
	}
}
