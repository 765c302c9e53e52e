package sse

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
)

// The tests in this file replay issue #25 item 20 with variants the other
// tests do not list: crowds of clients that never read, clients refused
// past MaxClients, resumptions from ids of every odd shape, all while the
// run publishes.

// TestAttackPublishWithACrowdThatNeverReads: while hundreds of clients
// connect and never read a byte (half of them past MaxClients), thousands
// of large events publish without waiting; the clients past MaxClients
// are answered 503 and closed, the stuck ones dropped after WriteTimeout.
func TestAttackPublishWithACrowdThatNeverReads(t *testing.T) {
	b := New(256)
	b.MaxClients = 60
	b.WriteTimeout = 2 * time.Second // (a write deadline can pass while the test starves the server of CPU)
	srv := httptest.NewServer(b)
	defer srv.Close()
	defer b.Close()
	addr := srv.Listener.Addr().String()
	const crowd = 120
	conns := make([]net.Conn, 0, crowd)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range crowd {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
	}
	big := strings.Repeat("x", 8<<10)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 3000 {
			b.Handle(context.Background(), events.ToolExecutionStart{ToolCallID: fmt.Sprint(i), ToolName: big})
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second): // it takes well under a second
		t.Fatal("publishing waited on clients that never read")
	}
	// Every client got an answer: a stream or a 503 that closes.
	refused := 0
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		var seen strings.Builder
		br := bufio.NewReader(io.TeeReader(c, &seen))
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("no answer: %v (%q)", err, seen.String())
		}
		if resp.StatusCode == http.StatusServiceUnavailable {
			refused++
			if !resp.Close {
				t.Fatal("a refusal kept its connection")
			}
		}
	}
	if refused == 0 { // (a stuck client dropped makes room for another)
		t.Fatalf("none refused of %d, with MaxClients %d", crowd, b.MaxClients)
	}
}

// TestAttackOddLastEventIDs: a resumption from any id that is not one of
// this Broker's gets a gap or a snapshot, then the events that follow;
// never silence, never a crash.
func TestAttackOddLastEventIDs(t *testing.T) {
	b := New(8)
	srv := httptest.NewServer(b)
	defer srv.Close()
	defer b.Close()
	for i := range 20 {
		b.Handle(context.Background(), events.ToolExecutionStart{ToolCallID: fmt.Sprint(i), ToolName: "t"})
	}
	e := b.epoch
	ids := []string{"x", "-", "--", e, e + "-", e + "--1", e + "-+1", e + "-0", e + "-00001", e + "-1", e + "-21",
		e + "-18446744073709551615", e + "-18446744073709551616", e + "-99999999999999999999999999", " " + e + "-19",
		e + "-19 ", e + "-1e3", e + "-0x10", "\u00e9-1", strings.Repeat("9", 10000), e + "-" + strings.Repeat("1", 10000)}
	var wg sync.WaitGroup
	for _, id := range ids {
		for _, where := range []string{"header", "query"} {
			wg.Go(func() {
				req, _ := http.NewRequest("GET", srv.URL, nil)
				if where == "header" {
					req.Header.Set("Last-Event-ID", id)
				} else {
					req.URL.RawQuery = "lastEventId=" + strings.NewReplacer(" ", "%20", "+", "%2B").Replace(id)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				resp, err := http.DefaultClient.Do(req.WithContext(ctx))
				if err != nil {
					t.Errorf("%s %q: %v", where, id, err)
					return
				}
				defer resp.Body.Close()
				sc := bufio.NewScanner(resp.Body)
				sc.Buffer(nil, 1<<20)
				for sc.Scan() {
					if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
						if name != "snapshot" && name != "gap" && name != "tool_execution_start" {
							t.Errorf("%s %q: first event %s", where, id, name)
						}
						return
					}
				}
				t.Errorf("%s %q: no event (%v)", where, id, sc.Err())
			})
		}
	}
	wg.Wait()
}
