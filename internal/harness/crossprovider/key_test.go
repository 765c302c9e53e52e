package crossprovider

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/internal/harness/recorded"
	"github.com/agentloop/agentloop/internal/httpx"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/anthropic"
	"github.com/agentloop/agentloop/providers/gemini"
	"github.com/agentloop/agentloop/providers/openai"
)

// The keys of TestKeyPrecedence: the provider's own, and a GetAPIKey
// hook's.
const (
	providerKey = "sk-Q7mX2vR9tL4kP8nB3wY6aF1e"
	hookKey     = "sk-Z5cJ1hG7dF3sA9eU2iO4bG2r"
)

// TestKeyPrecedence: on every wire a call goes out with the GetAPIKey
// hook's key when it returns one, else with the provider's own
// (providers.Request.APIKey states the rule); a server that echoes the
// key it got gets neither key into the error, the events or the session.
func TestKeyPrecedence(t *testing.T) {
	tests := []struct {
		name      string
		hook      func(context.Context, string) (string, error) // nil: no hook
		want, not string
	}{
		{"the provider's own", nil, providerKey, hookKey},
		{"a hook's wins", func(context.Context, string) (string, error) { return hookKey, nil }, hookKey, providerKey},
		{"a hook without one", func(context.Context, string) (string, error) { return "", nil }, providerKey, hookKey},
	}
	for _, hw := range hostileWires {
		for _, tt := range tests {
			t.Run(hw.name+"/"+tt.name, func(t *testing.T) {
				var mu sync.Mutex
				var sent strings.Builder // every header value and the query
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					mu.Lock()
					for _, vs := range r.Header {
						sent.WriteString(strings.Join(vs, " ") + "\n")
					}
					sent.WriteString(r.URL.RawQuery + "\n")
					mu.Unlock()
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusUnauthorized)
					fmt.Fprint(w, hw.refusal("invalid key "+r.Header.Get("Authorization")+r.Header.Get("X-Api-Key")+r.Header.Get("X-Goog-Api-Key")+r.URL.Query().Get("key")))
				}))
				defer srv.Close()
				cfg := loop.Config{Provider: hw.new(t, srv.URL, providerKey, providers.HTTPOptions{MaxRetries: -1}), Model: hw.model}
				if tt.hook != nil {
					cfg.Hooks = []loop.Hooks{{GetAPIKey: tt.hook}}
				}
				a, err := agent.New(agent.Options{Config: cfg})
				if err != nil {
					t.Fatal(err)
				}
				var wire bytes.Buffer
				a.Subscribe(func(_ context.Context, ev events.Event) {
					raw, _ := events.MarshalWire(ev)
					wire.Write(raw)
				})
				if err := a.Prompt(context.Background(), providers.NewUserText("hi")); err == nil {
					t.Fatal("the run did not fail")
				}
				mu.Lock()
				got := sent.String()
				mu.Unlock()
				if !strings.Contains(got, tt.want) || strings.Contains(got, tt.not) {
					t.Fatalf("the request carried %q, want %s and not %s", got, tt.want, tt.not)
				}
				var session bytes.Buffer
				if err := a.SaveSession(&session); err != nil {
					t.Fatal(err)
				}
				msgs := a.State().Messages
				last, _ := msgs[len(msgs)-1].(providers.AssistantMessage)
				if last.StopReason != providers.StopReasonError {
					t.Fatalf("%s: %q", last.StopReason, last.ErrorMessage)
				}
				for where, text := range map[string]string{"message": last.ErrorMessage, "events": wire.String(), "session": session.String()} {
					for _, key := range []string{providerKey, hookKey} {
						if run := keyRun(text, key); run != "" {
							t.Errorf("the %s carries %q of a key: %.200q", where, run, text)
						}
					}
				}
			})
		}
	}
}

// withHeaders makes the wire's provider with extra headers, returning the
// error a constructor reports (Gemini's) instead of failing.
func withHeaders(hw hostileWire, url string, h map[string]string) (providers.Provider, error) {
	o := providers.HTTPOptions{MaxRetries: -1}
	switch hw.name {
	case "chat":
		return openai.New(openai.Options{APIKey: providerKey, BaseURL: url, Headers: h, HTTPOptions: o}), nil
	case "responses":
		return openai.NewResponses(openai.Options{APIKey: providerKey, BaseURL: url, Headers: h, HTTPOptions: o}), nil
	case "anthropic":
		return anthropic.New(anthropic.Options{APIKey: providerKey, BaseURL: url, Headers: h, HTTPOptions: o}), nil
	case "gemini":
		return gemini.New(context.Background(), gemini.Options{APIKey: providerKey, BaseURL: url, Headers: h, HTTPOptions: o})
	}
	panic("unknown wire " + hw.name)
}

// TestKeyHeaderRefused: extra headers may not set the header a wire sends
// its key in (in any case), which would be a second place for the key and
// win over a GetAPIKey hook's: the provider refuses them before any
// request, naming the header and not its value. Other headers go out.
func TestKeyHeaderRefused(t *testing.T) {
	keyHeader := map[string]string{"chat": "Authorization", "responses": "Authorization", "anthropic": "X-Api-Key", "gemini": "X-Goog-Api-Key"}
	for _, hw := range hostileWires {
		h := keyHeader[hw.name]
		for _, name := range []string{h, strings.ToLower(h), strings.ToUpper(h), " " + h} {
			t.Run(hw.name+"/"+name, func(t *testing.T) {
				var requests atomic.Int32
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					requests.Add(1)
					w.WriteHeader(http.StatusUnauthorized)
				}))
				defer srv.Close()
				p, err := withHeaders(hw, srv.URL, map[string]string{"X-Trace": "1", name: "Bearer " + hookKey})
				if err == nil {
					_, err = p.Stream(context.Background(), recorded.Hi(hw.model))
				}
				if !errors.Is(err, httpx.ErrKeyHeader) || !strings.Contains(err.Error(), h) {
					t.Fatalf("error %v, want ErrKeyHeader naming %s", err, h)
				}
				if run := keyRun(err.Error(), hookKey); run != "" {
					t.Fatalf("the error carries %q of the header's value: %v", run, err)
				}
				if n := requests.Load(); n != 0 {
					t.Fatalf("%d requests", n)
				}
			})
		}
		t.Run(hw.name+"/other headers", func(t *testing.T) {
			got := make(chan string, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				select {
				case got <- r.Header.Get("X-Trace"):
				default:
				}
				w.WriteHeader(http.StatusUnauthorized)
			}))
			defer srv.Close()
			p, err := withHeaders(hw, srv.URL, map[string]string{"X-Trace": "1"})
			if err != nil {
				t.Fatal(err)
			}
			recorded.Collect(t, context.Background(), p, recorded.Hi(hw.model))
			if v := <-got; v != "1" {
				t.Fatalf("X-Trace %q", v)
			}
		})
	}
}
