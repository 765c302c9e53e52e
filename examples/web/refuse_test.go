package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentloop/agentloop/events/sse/webchat"
	"github.com/agentloop/agentloop/providers"
)

// TestRefusalsAnswerAtOnce: on the server main runs (webchat.NewServer), a
// request the page's API refuses that declares a body and never sends it
// is answered at once (not after a timeout) and its connection closed;
// none of them starts a run.
func TestRefusalsAnswerAtOnce(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	a, err := researchAgent(scripted(), providers.Model{ID: "scripted", Provider: "faux"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(a)
	hs := httptest.NewUnstartedServer(nil)
	hs.Config = webchat.NewServer("", s.handler())
	hs.Start()
	defer hs.Close()
	defer s.close()
	addr := hs.Listener.Addr().String()
	host, auth, ct, cl := "Host: "+addr, "Authorization: Bearer "+s.guard.Token, "Content-Type: application/json", "Content-Length: 100"
	cases := []struct {
		name string
		head []string
		want int
	}{
		{"no token", []string{"POST /api/send HTTP/1.1", host, ct, cl}, 401},
		{"a wrong token", []string{"POST /api/send HTTP/1.1", host, ct, "Authorization: Bearer nope", cl}, 401},
		{"a foreign host", []string{"POST /api/send HTTP/1.1", "Host: attacker.example", auth, ct, cl}, 403},
		{"a foreign origin", []string{"POST /api/stop HTTP/1.1", host, auth, ct, "Origin: http://evil.example", cl}, 403},
		{"a cross-site form", []string{"POST /api/send HTTP/1.1", host, auth, "Content-Type: text/plain", cl}, 415},
		{"too large", []string{"POST /api/send HTTP/1.1", host, auth, ct, "Content-Length: 99999999"}, 413},
		{"a wrong method", []string{"PUT /api/send HTTP/1.1", host, auth, ct, cl}, 405},
		{"events with a body and no token", []string{"GET /api/events HTTP/1.1", host, cl}, 401},
	}
	got := make([]string, len(cases))
	var wg sync.WaitGroup
	for i, tc := range cases { // at once: each waits for its close
		wg.Go(func() { got[i] = refusal(addr, tc.head, tc.want) })
	}
	wg.Wait()
	for i, tc := range cases {
		if got[i] != "" {
			t.Errorf("%s: %s", tc.name, got[i])
		}
	}
	if n := len(s.agent.State().Messages); n != 0 {
		t.Fatalf("a refused request started a run: %d messages", n)
	}
}

// refusal sends a request's head and no body on a connection of its own
// and says what is wrong with the answer: not status want, or not closed
// at once. Wide margin: an answer takes milliseconds; a server that waits
// for the body answers after its 30 s body timeout.
func refusal(addr string, head []string, want int) string {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return err.Error()
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, strings.Join(head, "\r\n")+"\r\n\r\n"); err != nil {
		return err.Error()
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return "no answer: " + err.Error()
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_, err = br.ReadByte()
	if resp.StatusCode != want || !resp.Close || err != io.EOF {
		return fmt.Sprintf("status %d (want %d), Connection: close %v, then %v (want EOF)", resp.StatusCode, want, resp.Close, err)
	}
	return ""
}
