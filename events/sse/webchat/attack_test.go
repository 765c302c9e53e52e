package webchat_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/events/sse"
	"github.com/agentloop/agentloop/events/sse/webchat"
)

// The tests in this file replay issue #25 item 21 with variants the other
// tests do not list: HTTP/1.0, pipelined requests, chunked bodies cut
// short, bodies started and never ended, odd Host, Origin and
// Content-Type values. Every refusal is answered at once and its
// connection closed, on a server without timeouts.

func attackServer(t *testing.T) (*webchat.Guard, string) {
	t.Helper()
	g := webchat.NewGuard()
	g.BodyTimeout = 200 * time.Millisecond
	b := sse.New(8)
	t.Cleanup(b.Close)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/send", func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	})
	mux.HandleFunc("POST /api/stop", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	srv := httptest.NewServer(g.Handler(mux))
	t.Cleanup(srv.Close)
	return g, srv.Listener.Addr().String()
}

func TestAttackRefusalsAnswerAtOnce(t *testing.T) {
	g, addr := attackServer(t)
	host := "Host: " + addr
	auth := "Authorization: Bearer " + g.Token
	json := "Content-Type: application/json"
	cases := []struct {
		name string
		head []string
		body string
		want int
	}{
		{"HTTP/1.0, no token", []string{"POST /api/send HTTP/1.0", host, json, "Content-Length: 100"}, "", 401},
		{"HTTP/1.0 keep-alive, no token", []string{"POST /api/send HTTP/1.0", host, json, "Connection: keep-alive", "Content-Length: 100"}, "", 401},
		{"HTTP/1.0, no host", []string{"POST /api/send HTTP/1.0", auth, json, "Content-Length: 100"}, "", 403},
		{"a chunked body cut short, no token", []string{"POST /api/send HTTP/1.1", host, json, "Transfer-Encoding: chunked"}, "10\r\nabc", 401},
		{"a chunked body cut short, foreign origin", []string{"POST /api/send HTTP/1.1", host, auth, json, "Origin: http://evil.example", "Transfer-Encoding: chunked"}, "ffffff\r\nabc", 403},
		{"a part of the body, no token", []string{"POST /api/send HTTP/1.1", host, json, "Content-Length: 100000"}, strings.Repeat("x", 1000), 401},
		{"a body past 256 KiB declared, no token", []string{"POST /api/send HTTP/1.1", host, json, "Content-Length: 10000000"}, strings.Repeat("x", 1000), 401},
		{"pipelined after a refusal", []string{"POST /api/send HTTP/1.1", host, json, "Content-Length: 5"}, "{}{}\nGET / HTTP/1.1\r\n" + host + "\r\n\r\n", 401},
		{"a host with a trailing dot", []string{"POST /api/send HTTP/1.1", "Host: localhost.", auth, json, "Content-Length: 100"}, "", 403},
		{"a host ending in a loopback name", []string{"POST /api/send HTTP/1.1", "Host: 127.0.0.1.evil.example", auth, json, "Content-Length: 100"}, "", 403},
		{"a host with userinfo", []string{"POST /api/send HTTP/1.1", "Host: localhost@evil.example", auth, json, "Content-Length: 100"}, "", 400}, // net/http refuses it,
		{"a lower-case bearer", []string{"POST /api/send HTTP/1.1", host, json, "Authorization: bearer " + g.Token, "Content-Length: 100"}, "", 401},
		{"a token with a space", []string{"POST /api/send HTTP/1.1", host, json, "Authorization: Bearer  " + g.Token, "Content-Length: 100"}, "", 401},
		{"a token's prefix", []string{"POST /api/send HTTP/1.1", host, json, "Authorization: Bearer " + g.Token[:10], "Content-Length: 100"}, "", 401},
		{"an origin of another port", []string{"POST /api/send HTTP/1.1", host, auth, json, "Origin: http://" + strings.Split(addr, ":")[0] + ":1", "Content-Length: 100"}, "", 403},
		{"a file origin", []string{"POST /api/send HTTP/1.1", host, auth, json, "Origin: file://", "Content-Length: 100"}, "", 403},
		{"two content types", []string{"POST /api/send HTTP/1.1", host, auth, "Content-Type: application/json, text/plain", "Content-Length: 100"}, "", 415},
		{"json as a suffix", []string{"POST /api/send HTTP/1.1", host, auth, "Content-Type: text/plain; x=application/json", "Content-Length: 100"}, "", 415},
		{"an options request from afar", []string{"OPTIONS /api/send HTTP/1.1", host, auth, "Origin: http://evil.example", "Content-Length: 100"}, "", 403},
		{"a delete with a form", []string{"DELETE /api/send HTTP/1.1", host, auth, "Content-Type: multipart/form-data; boundary=x", "Content-Length: 100"}, "", 415},
		{"a body too large by a byte, chunked", []string{"POST /api/send HTTP/1.1", host, auth, json, "Transfer-Encoding: chunked"}, fmt.Sprintf("%x\r\n%s\r\n", webchat.DefaultMaxBody+1, strings.Repeat("x", webchat.DefaultMaxBody+1)), 400},
		{"an accepted chunked body that stops", []string{"POST /api/send HTTP/1.1", host, auth, json, "Transfer-Encoding: chunked"}, "5\r\nhello\r\n", 400},
		{"an accepted body that stops", []string{"POST /api/send HTTP/1.1", host, auth, json, "Content-Length: 100"}, "{", 400},
		{"a handler that reads nothing, chunked", []string{"POST /api/stop HTTP/1.1", host, auth, json, "Transfer-Encoding: chunked"}, "5\r\nhel", 204},
	}
	var heads [][]string
	var bodies []string
	for _, tc := range cases {
		heads, bodies = append(heads, tc.head), append(bodies, tc.body)
	}
	replies := exchanges(addr, heads, bodies)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if r := replies[i]; r.status != tc.want || !r.close || !r.closed {
				t.Fatalf("status %d (want %d), Connection: close %v, closed %v: %.200s", r.status, tc.want, r.close, r.closed, r.body)
			}
		})
	}
}

// TestAttackPipelinedAfterAnAnswer: a request answered in full keeps its
// connection; the next, pipelined with it and refused, is answered and
// the connection closed, however much body it declared.
func TestAttackPipelinedAfterAnAnswer(t *testing.T) {
	g, addr := attackServer(t)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(answerBound))
	ok := "POST /api/send HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer " + g.Token + "\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
	refused := "POST /api/send HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n"
	if _, err := io.WriteString(conn, ok+ok+refused); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	for i, want := range []int{200, 200, 401} {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != want || resp.Close != (want == 401) {
			t.Fatalf("answer %d: %d, close %v", i, resp.StatusCode, resp.Close)
		}
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("after the refusal: %v", err)
	}
}
