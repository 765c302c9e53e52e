package crossprovider

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
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
				if err := a.Prompt(context.Background(), "hi"); err == nil {
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
