package webchat_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/events/sse"
	"github.com/agentloop/agentloop/events/sse/webchat"
)

// TestHandler: the page is served, a send reaches the backend and answers
// its mode, bad bodies are refused, stop answers 204, and backend errors
// come back as 502.
func TestHandler(t *testing.T) {
	var sent []string
	fail := false
	guard := sse.NewGuard()
	h := webchat.Handler(webchat.Backend{
		Guard:  guard,
		Events: http.NotFoundHandler(),
		Send: func(_ context.Context, text string) (string, error) {
			if fail {
				return "", errors.New("worker gone")
			}
			sent = append(sent, text)
			return "prompt", nil
		},
		Stop: func(context.Context) error { return nil },
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	do := func(method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+guard.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := do("GET", "/", ""); code != 200 || !strings.Contains(body, "<html") {
		t.Fatalf("page: %d %.80s", code, body)
	}
	if code, body := do("POST", "/api/send", `{"text":"hi"}`); code != 200 || !strings.Contains(body, `"prompt"`) || len(sent) != 1 || sent[0] != "hi" {
		t.Fatalf("send: %d %s %v", code, body, sent)
	}
	for _, bad := range []string{``, `{}`, `{"text":"  "}`, `nope`, `{"text":"` + strings.Repeat("x", 100<<10) + `"}`} {
		if code, _ := do("POST", "/api/send", bad); code != http.StatusBadRequest {
			t.Errorf("%.20q: status %d", bad, code)
		}
	}
	if code, _ := do("POST", "/api/stop", ""); code != http.StatusNoContent {
		t.Fatalf("stop: %d", code)
	}
	fail = true
	if code, body := do("POST", "/api/send", `{"text":"hi"}`); code != http.StatusBadGateway || !strings.Contains(body, "worker gone") {
		t.Fatalf("backend error: %d %s", code, body)
	}
}

// TestHandlerNeedsAGuard: a Backend without a Guard serves nothing.
func TestHandlerNeedsAGuard(t *testing.T) {
	srv := httptest.NewServer(webchat.Handler(webchat.Backend{Events: http.NotFoundHandler()}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("status %d", resp.StatusCode)
	}
}
