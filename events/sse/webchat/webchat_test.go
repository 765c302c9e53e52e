package webchat_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentloop/agentloop/events/sse"
	"github.com/agentloop/agentloop/events/sse/webchat"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestHandler: the page is served, a send reaches the backend and answers
// its mode, bad bodies are refused, stop answers 204, and backend errors
// come back as 502.
func TestHandler(t *testing.T) {
	var sent []string
	fail := false
	guard := webchat.NewGuard()
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
	for _, bad := range []string{``, `{}`, `{"text":"  "}`, `nope`, `{"text":"hi"} trailing`} {
		if code, _ := do("POST", "/api/send", bad); code != http.StatusBadRequest {
			t.Errorf("%.20q: status %d", bad, code)
		}
	}
	long := `{"text":"` + strings.Repeat("x", 100<<10) + `"}`
	if code, _ := do("POST", "/api/send", long); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a long message: status %d", code)
	}
	// The same without a declared length (chunked): stopped at the bound.
	req, _ := http.NewRequest("POST", srv.URL+"/api/send", io.MultiReader(strings.NewReader(long)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+guard.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || req.ContentLength != 0 {
		t.Errorf("a long chunked message: status %d", resp.StatusCode)
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

// reply is what a server answered on a connection of its own.
type reply struct {
	status int  // 0 without an answer
	close  bool // the answer said Connection: close
	closed bool // the server then closed the connection
	err    error
}

// roundTrip sends head (a request's header block, without the blank line
// that ends it) on a fresh connection and no body, whatever the head
// declares, and reads the answer and what follows it, for 10 s at most
// (an answer takes milliseconds; the connection closes within half a
// second).
func roundTrip(addr, head string) (r reply) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return reply{err: err}
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, strings.ReplaceAll(head, "\n", "\r\n")+"\r\n\r\n"); err != nil {
		return reply{err: err}
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return reply{err: err}
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return reply{status: resp.StatusCode, err: err}
	}
	_, err = br.ReadByte()
	return reply{status: resp.StatusCode, close: resp.Close, closed: err == io.EOF}
}

// TestRefusalsAnswerAtOnce: every request the page's API refuses, which
// declares a body and never sends it, is answered at once and its
// connection closed, on a server with no timeouts at all.
func TestRefusalsAnswerAtOnce(t *testing.T) {
	guard := webchat.NewGuard()
	events := sse.New(8)
	events.MaxClients = 1
	defer events.Close()
	h := webchat.Handler(webchat.Backend{
		Guard:  guard,
		Events: events,
		Send:   func(context.Context, string) (string, error) { return "prompt", nil },
		Stop:   func(context.Context) error { return nil },
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	unguarded := httptest.NewServer(webchat.Handler(webchat.Backend{Events: events}))
	defer unguarded.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+guard.Token)
	held, err := http.DefaultClient.Do(req) // the only place on the stream
	if err != nil {
		t.Fatal(err)
	}
	defer held.Body.Close()

	addr := srv.Listener.Addr().String()
	host, auth, ct, cl := "Host: "+addr, "Authorization: Bearer "+guard.Token, "Content-Type: application/json", "Content-Length: 100"
	cases := []struct {
		name string
		addr string
		head []string
		want int
	}{
		{"no token", addr, []string{"POST /api/send HTTP/1.1", host, ct, cl}, 401},
		{"a wrong token", addr, []string{"POST /api/stop HTTP/1.1", host, ct, "Authorization: Bearer x", cl}, 401},
		{"a foreign host", addr, []string{"POST /api/send HTTP/1.1", "Host: evil.example", auth, ct, cl}, 403},
		{"a foreign origin", addr, []string{"POST /api/send HTTP/1.1", host, auth, ct, "Origin: http://evil.example", cl}, 403},
		{"a form", addr, []string{"POST /api/send HTTP/1.1", host, auth, "Content-Type: multipart/form-data; boundary=x", cl}, 415},
		{"too large", addr, []string{"POST /api/send HTTP/1.1", host, auth, ct, "Content-Length: 10000000"}, 413},
		{"a wrong method", addr, []string{"DELETE /api/send HTTP/1.1", host, auth, ct, cl}, 405},
		{"a get of the send path", addr, []string{"GET /api/send HTTP/1.1", host, auth, cl}, 404},
		{"a page with a body", addr, []string{"POST / HTTP/1.1", host, auth, ct, cl}, 405},
		{"stop, which reads no body", addr, []string{"POST /api/stop HTTP/1.1", host, auth, ct, cl}, 204},
		{"events past MaxClients", addr, []string{"GET /api/events HTTP/1.1", host, auth, cl}, 503},
		{"no guard", unguarded.Listener.Addr().String(), []string{"POST /api/send HTTP/1.1", host, auth, ct, cl}, 500},
	}
	replies := make([]reply, len(cases))
	var wg sync.WaitGroup
	for i, tc := range cases { // at once: each waits for its close
		wg.Go(func() { replies[i] = roundTrip(tc.addr, strings.Join(tc.head, "\n")) })
	}
	wg.Wait()
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if r := replies[i]; r.status != tc.want || !r.close || !r.closed || r.err != nil {
				t.Fatalf("status %d (want %d), Connection: close %v, closed %v, %v", r.status, tc.want, r.close, r.closed, r.err)
			}
		})
	}
}
