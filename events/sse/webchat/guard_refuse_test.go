package webchat_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/events/sse"
	"github.com/agentloop/agentloop/events/sse/webchat"
)

// answerBound is how long a test waits for an answer that should come at
// once (it takes milliseconds) before calling it never.
const answerBound = 10 * time.Second

// answer is what a server answered on a connection of its own.
type answer struct {
	status int    // 0 without an answer
	close  bool   // the answer said Connection: close
	closed bool   // the server then closed the connection
	body   string // the answer's body, or what went wrong
}

// exchange sends head (a request's header block, without the blank line
// that ends it) on a fresh connection, then body (whatever the head
// declares), and reads the answer and what follows it, for answerBound at
// most.
func exchange(addr, head, body string) answer {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return answer{body: err.Error()}
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(answerBound))
	if _, err := io.WriteString(conn, strings.ReplaceAll(head, "\n", "\r\n")+"\r\n\r\n"+body); err != nil {
		return answer{body: err.Error()}
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return answer{body: "no answer: " + err.Error()}
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{status: resp.StatusCode, body: "the answer's body: " + err.Error()}
	}
	_, err = br.ReadByte()
	return answer{status: resp.StatusCode, close: resp.Close, closed: err == io.EOF, body: string(b)}
}

// exchanges runs exchange for each head and body, all at once.
func exchanges(addr string, heads [][]string, bodies []string) []answer {
	replies := make([]answer, len(heads))
	var wg sync.WaitGroup
	for i := range heads {
		wg.Go(func() { replies[i] = exchange(addr, strings.Join(heads[i], "\n"), bodies[i]) })
	}
	wg.Wait()
	return replies
}

// TestRefusalsAnswerAtOnceAndClose: a request the Guard (or the handler
// behind it) refuses, which declares a body and sends none, is answered
// at once and its connection closed, on a server with no timeouts at all:
// nothing waits for the body.
func TestRefusalsAnswerAtOnceAndClose(t *testing.T) {
	g := webchat.NewGuard()
	b := sse.New(8)
	b.MaxClients = 1
	defer b.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/send", func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	})
	mux.HandleFunc("POST /api/stop", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent) // reads no body
	})
	mux.Handle("GET /api/events", b)
	srv := httptest.NewServer(g.Handler(mux))
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	// One client holds the event stream's only place.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+g.Token)
	held, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Body.Close()

	host := "Host: " + addr
	auth := "Authorization: Bearer " + g.Token
	json := "Content-Type: application/json"
	cases := []struct {
		name string
		head []string
		want int
		body string
	}{
		{"no token", []string{"POST /api/send HTTP/1.1", host, json, "Content-Length: 100"}, 401, ""},
		{"no token, the body sent", []string{"POST /api/send HTTP/1.1", host, json, "Content-Length: 100"}, 401, strings.Repeat("x", 100)},
		{"too large, the body sent", []string{"POST /api/send HTTP/1.1", host, auth, json, "Content-Length: 100000"}, 413, strings.Repeat("x", 100000)},
		{"a wrong token", []string{"POST /api/send HTTP/1.1", host, json, "Authorization: Bearer nope", "Content-Length: 100"}, 401, ""},
		{"a query token on a post", []string{"POST /api/send?token=" + g.Token + " HTTP/1.1", host, json, "Content-Length: 100"}, 401, ""},
		{"a wrong cookie", []string{"POST /api/send HTTP/1.1", host, json, "Cookie: agentloop_token=nope", "Content-Length: 100"}, 401, ""},
		{"no token on a get", []string{"GET / HTTP/1.1", host, "Content-Length: 100"}, 401, ""},
		{"a foreign host", []string{"POST /api/send HTTP/1.1", "Host: evil.example", auth, json, "Content-Length: 100"}, 403, ""},
		{"a foreign host on a get", []string{"GET /api/events HTTP/1.1", "Host: evil.example:80", auth, "Content-Length: 100"}, 403, ""},
		{"a foreign origin", []string{"POST /api/send HTTP/1.1", host, auth, json, "Origin: http://evil.example", "Content-Length: 100"}, 403, ""},
		{"a null origin", []string{"POST /api/send HTTP/1.1", host, auth, json, "Origin: null", "Content-Length: 100"}, 403, ""},
		{"a form", []string{"POST /api/send HTTP/1.1", host, auth, "Content-Type: application/x-www-form-urlencoded", "Content-Length: 100"}, 415, ""},
		{"no content type", []string{"POST /api/send HTTP/1.1", host, auth, "Content-Length: 100"}, 415, ""},
		{"text/plain", []string{"POST /api/send HTTP/1.1", host, auth, "Content-Type: text/plain", "Content-Length: 100"}, 415, ""},
		{"too large", []string{"POST /api/send HTTP/1.1", host, auth, json, fmt.Sprintf("Content-Length: %d", webchat.DefaultMaxBody+1)}, 413, ""},
		{"too large on a get", []string{"GET / HTTP/1.1", host, auth, "Content-Length: 1000000000"}, 413, ""},
		{"a chunked body, no token", []string{"POST /api/send HTTP/1.1", host, json, "Transfer-Encoding: chunked"}, 401, ""},
		{"expecting 100-continue, no token", []string{"POST /api/send HTTP/1.1", host, json, "Expect: 100-continue", "Content-Length: 100"}, 401, ""},
		{"a wrong method", []string{"PUT /api/send HTTP/1.1", host, auth, json, "Content-Length: 100"}, 405, ""},
		{"a get of a post's path", []string{"GET /api/send HTTP/1.1", host, auth, "Content-Length: 100"}, 405, ""},
		{"no such path", []string{"POST /nope HTTP/1.1", host, auth, json, "Content-Length: 100"}, 404, ""},
		{"a handler that reads no body", []string{"POST /api/stop HTTP/1.1", host, auth, json, "Content-Length: 100"}, 204, ""},
		{"past MaxClients", []string{"GET /api/events HTTP/1.1", host, auth, "Content-Length: 100"}, 503, ""},
	}
	var heads [][]string
	var bodies []string
	for _, tc := range cases {
		heads, bodies = append(heads, tc.head), append(bodies, tc.body)
	}
	replies := exchanges(addr, heads, bodies) // at once: each may wait for its close
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if r := replies[i]; r.status != tc.want || !r.close || !r.closed {
				t.Fatalf("status %d (want %d), Connection: close %v, closed %v: %s", r.status, tc.want, r.close, r.closed, r.body)
			}
		})
	}
}

// TestAcceptedBodiesAreBounded: a body the handler reads must arrive
// within BodyTimeout (then the answer comes and the connection closes);
// one that arrives whole keeps the connection for the next request.
func TestAcceptedBodiesAreBounded(t *testing.T) {
	g := webchat.NewGuard()
	g.BodyTimeout = 50 * time.Millisecond
	srv := httptest.NewServer(g.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, "the body did not arrive", http.StatusBadRequest)
		}
	})))
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	head := "POST / HTTP/1.1\nHost: " + addr + "\nAuthorization: Bearer " + g.Token + "\nContent-Type: application/json\nContent-Length: 100"
	if r := exchange(addr, head, ""); r.status != http.StatusBadRequest || !r.closed {
		t.Fatalf("a body that never came: %d, closed %v: %s", r.status, r.closed, r.body)
	}

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(answerBound))
	br := bufio.NewReader(conn)
	for i := range 2 {
		req := strings.ReplaceAll(strings.Replace(head, "100", "2", 1), "\n", "\r\n") + "\r\n\r\n{}"
		if _, err := io.WriteString(conn, req); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d on one connection: %v", i, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != 200 || resp.Close {
			t.Fatalf("request %d: %d, close %v", i, resp.StatusCode, resp.Close)
		}
	}
}

// TestStreamOutlivesReadTimeout: NewServer's read timeout bounds reading
// requests, not an event stream that lasts.
func TestStreamOutlivesReadTimeout(t *testing.T) {
	b := sse.New(8)
	defer b.Close()
	srv := httptest.NewUnstartedServer(nil)
	srv.Config = webchat.NewServer("", b)
	if srv.Config.ReadTimeout <= 0 || srv.Config.ReadHeaderTimeout <= 0 || srv.Config.IdleTimeout <= 0 {
		t.Fatalf("NewServer's timeouts: %+v", srv.Config)
	}
	const readTimeout = 20 * time.Millisecond
	srv.Config.ReadTimeout = readTimeout
	srv.Start()
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	next := func() string {
		for sc.Scan() {
			if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				return name
			}
		}
		return "the stream ended"
	}
	if got := next(); got != "snapshot" {
		t.Fatalf("first event: %s", got)
	}
	time.Sleep(10 * readTimeout) // not synchronisation: the deadline must pass
	b.Handle(context.Background(), events.AgentStart{})
	if got := next(); got != "agent_start" {
		t.Fatalf("after the read timeout: %s", got)
	}
}
