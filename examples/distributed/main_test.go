package main

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// TestGatewayAndWorkerThroughNATS: a message posted to the gateway reaches
// the worker as a command; the worker's events come back through NATS and
// out of the gateway as SSE, up to agent_end.
func TestGatewayAndWorkerThroughNATS(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	srv, stop, err := embeddedServer()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wjs, closeW, err := connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer closeW()
	gjs, closeG, err := connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer closeG()
	w, err := newWorker(ctx, wjs, "t1")
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	g, err := newGateway(ctx, gjs, "t1")
	if err != nil {
		t.Fatal(err)
	}
	defer g.close()
	hs := httptest.NewServer(g.handler())
	defer hs.Close()

	sctx, scancel := context.WithTimeout(ctx, 60*time.Second)
	defer scancel()
	req, _ := http.NewRequestWithContext(sctx, "GET", hs.URL+"/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+g.guard.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	preq, _ := http.NewRequest("POST", hs.URL+"/api/send", strings.NewReader(`{"text":"tea"}`))
	preq.Header.Set("Content-Type", "application/json")
	preq.Header.Set("Authorization", "Bearer "+g.guard.Token)
	post, err := http.DefaultClient.Do(preq)
	if err != nil || post.StatusCode != 200 {
		t.Fatalf("send: %v %v", err, post.Status)
	}
	post.Body.Close()
	var names []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			names = append(names, name)
			if name == "agent_end" {
				break
			}
		}
	}
	got := strings.Join(names, ",")
	for _, want := range []string{"agent_start", "tool_execution_start", "tool_execution_update", "tool_execution_end", "agent_end"} {
		if !strings.Contains(got, want) {
			t.Fatalf("gateway stream lacks %s: %s", want, got)
		}
	}
	if strings.Count(got, "tool_execution_start") != 3 || strings.Count(got, "tool_execution_end") != 3 {
		t.Fatalf("tool events: %s", got)
	}
}

// TestEmbeddedServerLeavesNothing: the embedded server's JetStream folder
// is gone once it stops, so neither the example nor its tests leave
// anything in the temporary folder.
func TestEmbeddedServerLeavesNothing(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	srv, stop, err := embeddedServer()
	if err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(tmp); len(left) == 0 {
		t.Fatalf("the server stores nothing in TMPDIR (%s); the test proves nothing", tmp)
	}
	_, closeConn, err := connect(srv.ClientURL()) // which makes the stream: the server stores it
	if err != nil {
		t.Fatal(err)
	}
	closeConn()
	stop()
	left, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("left behind in TMPDIR: %s", e.Name())
	}
}
