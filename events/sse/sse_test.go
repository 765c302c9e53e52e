package sse

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/providers/kit"
	"github.com/agentloop/agentloop/tools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type frame struct {
	id, epoch, name, data, comment string
}

// client reads SSE frames from a server.
type client struct {
	resp *http.Response
	sc   *bufio.Scanner
}

func connect(t *testing.T, ctx context.Context, url, lastID string) *client {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	return &client{resp: resp, sc: bufio.NewScanner(resp.Body)}
}

// next returns the next frame that carries an event or a comment.
func (c *client) next() (frame, bool) {
	var f frame
	for c.sc.Scan() {
		line := c.sc.Text()
		if line == "" {
			if f.name != "" || f.comment != "" {
				return f, true
			}
			continue
		}
		switch {
		case strings.HasPrefix(line, ":"):
			f.comment = strings.TrimSpace(line[1:])
		case strings.HasPrefix(line, "id: "):
			_, f.id, _ = strings.Cut(line[4:], "-") // the sequence; the epoch is the Broker's
			f.epoch, _, _ = strings.Cut(line[4:], "-")
		case strings.HasPrefix(line, "event: "):
			f.name = line[7:]
		case strings.HasPrefix(line, "data: "):
			f.data = line[6:]
		}
	}
	return f, false
}

func (c *client) event(t *testing.T) frame {
	t.Helper()
	for {
		f, ok := c.next()
		if !ok {
			t.Fatal("stream ended")
		}
		if f.name != "" {
			return f
		}
	}
}

func start(id string) events.Event { return events.ToolExecutionStart{ToolCallID: id, ToolName: "t"} }

func TestResumeWithoutLossOrDuplicates(t *testing.T) {
	b := New(16)
	srv := httptest.NewServer(b)
	defer srv.Close()
	defer b.Close()
	for i := 1; i <= 5; i++ {
		b.Handle(context.Background(), start(fmt.Sprint("c", i)))
	}
	c := connect(t, context.Background(), srv.URL, b.epoch+"-3")
	for _, want := range []string{"4", "5"} {
		if f := c.event(t); f.id != want || f.name != "tool_execution_start" {
			t.Fatalf("got %+v, want id %s", f, want)
		}
	}
	b.Handle(context.Background(), start("c6"))
	f := c.event(t)
	var e map[string]any
	if err := json.Unmarshal([]byte(f.data), &e); err != nil || f.id != "6" || e["toolCallId"] != "c6" || e["type"] != "tool_execution_start" {
		t.Fatalf("live event %+v %v", f, err)
	}
	// Without an id the stream starts with a snapshot as of the newest
	// event: here, six tool calls running.
	c2 := connect(t, context.Background(), srv.URL, "")
	if f := c2.event(t); f.id != "6" || f.name != "snapshot" || strings.Count(f.data, `"toolName":"t"`) != 6 {
		t.Fatalf("fresh client starts with %+v", f)
	}
	b.Handle(context.Background(), start("c7"))
	if f := c2.event(t); f.id != "7" {
		t.Fatalf("after the snapshot: %+v", f)
	}
}

func TestGapWhenBufferOverflowed(t *testing.T) {
	b := New(4)
	srv := httptest.NewServer(b)
	defer srv.Close()
	defer b.Close()
	for i := 1; i <= 10; i++ {
		b.Handle(context.Background(), start(fmt.Sprint(i)))
	}
	c := connect(t, context.Background(), srv.URL, b.epoch+"-1")
	if f := c.event(t); f.name != "gap" || !strings.HasPrefix(f.data, `{"missed":5,`) {
		t.Fatalf("first frame %+v", f)
	}
	if f := c.event(t); f.name != "snapshot" || f.id != "10" || strings.Count(f.data, `"toolName":"t"`) != 10 {
		t.Fatalf("after the gap: %+v", f)
	}
}

// TestSlowClientNeverBlocksPublisher: a client that stops reading does not
// hold up the run.
func TestSlowClientNeverBlocksPublisher(t *testing.T) {
	b := New(64)
	b.WriteTimeout = 200 * time.Millisecond
	returned := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.ServeHTTP(w, r)
		close(returned)
	}))
	defer srv.Close()
	c := connect(t, context.Background(), srv.URL, "")
	defer c.resp.Body.Close() // before the server closes
	big := strings.Repeat("x", 4096)
	done := make(chan struct{})
	go func() {
		for i := range 5000 {
			b.Handle(context.Background(), events.ToolExecutionStart{ToolCallID: fmt.Sprint(i), ToolName: big})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second): // wide margin; it takes milliseconds
		t.Fatal("publishing blocked on a client that does not read")
	}
	if b.LastID() != 5000 {
		t.Fatalf("last id %d", b.LastID())
	}
	// The stuck client is dropped once a write has waited WriteTimeout.
	select {
	case <-returned:
	case <-time.After(30 * time.Second): // wide margin over 200 ms
		t.Fatal("a client that stopped reading was never dropped")
	}
}

func TestClientGoneAndClose(t *testing.T) {
	b := New(8)
	returned := make(chan struct{}, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.ServeHTTP(w, r)
		returned <- struct{}{}
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	c := connect(t, ctx, srv.URL, "")
	b.Handle(context.Background(), start("a"))
	c.event(t)
	cancel()
	c.resp.Body.Close()
	<-returned // the handler noticed the client went away

	c2 := connect(t, context.Background(), srv.URL, "")
	b.Handle(context.Background(), events.AgentEnd{})
	b.Close()
	n := 0
	for {
		f, ok := c2.next()
		if !ok {
			break
		}
		if f.name != "" {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d events before the stream closed", n)
	}
	<-returned
}

func TestHeartbeatAndCloseOnAgentEnd(t *testing.T) {
	b := New(8)
	b.Heartbeat = 10 * time.Millisecond
	b.CloseOnAgentEnd = true
	srv := httptest.NewServer(b)
	defer srv.Close()
	c := connect(t, context.Background(), srv.URL, "")
	for {
		f, ok := c.next()
		if !ok {
			t.Fatal("stream ended before a heartbeat")
		}
		if f.comment == "ping" {
			break
		}
	}
	b.Handle(context.Background(), events.AgentStart{})
	b.Handle(context.Background(), events.AgentEnd{})
	b.Handle(context.Background(), events.AgentStart{}) // after the end: dropped
	var names []string
	for {
		f, ok := c.next()
		if !ok {
			break
		}
		if f.name != "" {
			names = append(names, f.name)
		}
	}
	if strings.Join(names, ",") != "agent_start,agent_end" {
		t.Fatalf("events %v", names)
	}
}

// TestForeignIDsGetAGapAndASnapshot: an id from another epoch (a server
// that restarted), one past the newest event, a huge one and garbage each
// get a gap event and then a snapshot, never silence.
func TestForeignIDsGetAGapAndASnapshot(t *testing.T) {
	b := New(16)
	srv := httptest.NewServer(b)
	defer srv.Close()
	defer b.Close()
	for i := 1; i <= 3; i++ {
		b.Handle(context.Background(), start(fmt.Sprint("c", i)))
	}
	for _, id := range []string{"0badf00d-2", b.epoch + "-99", b.epoch + "-18446744073709551615", "18446744073709551615", "junk"} {
		c := connect(t, context.Background(), srv.URL, id)
		if f := c.event(t); f.name != "gap" || !strings.Contains(f.data, "not one of this server's") {
			t.Fatalf("%s: first frame %+v", id, f)
		}
		if f := c.event(t); f.name != "snapshot" || f.id != "3" || f.epoch != b.epoch {
			t.Fatalf("%s: got %+v, want a snapshot as of 3", id, f)
		}
	}
	if New(1).epoch == b.epoch {
		t.Fatal("two Brokers share an epoch")
	}
}

// TestBufferBoundedByBytes: the replay buffer keeps at most MaxBytes of
// encoded events (always the newest).
func TestBufferBoundedByBytes(t *testing.T) {
	b := New(1000)
	b.MaxBytes = 2000
	for i := range 100 {
		b.Handle(context.Background(), start(fmt.Sprintf("call-%03d", i)))
	}
	b.mu.Lock()
	kept := b.buf.kept()
	n, bytes := len(kept), b.bytes
	newest := kept[len(kept)-1].id
	b.mu.Unlock()
	if bytes > 2000 || n == 0 || n == 100 || newest != 100 {
		t.Fatalf("%d events, %d bytes, newest %d", n, bytes, newest)
	}
}

// TestMaxClients: past MaxClients a client gets 503; a client that leaves
// makes room.
func TestMaxClients(t *testing.T) {
	b := New(4)
	b.MaxClients = 1
	srv := httptest.NewServer(b)
	defer srv.Close()
	defer b.Close()
	ctx, cancel := context.WithCancel(context.Background())
	connect(t, ctx, srv.URL, "") // admitted: its headers arrived
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("second client: %d", resp.StatusCode)
	}
	cancel()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b.clients.Load() == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first client was not let go")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestWireBytesGrowWithTheText: a 100 KB answer streamed in 4-character
// pieces costs at most 4 times its length on the wire plus a fixed cost per
// event (it cost the square: every update carried the message so far).
func TestWireBytesGrowWithTheText(t *testing.T) {
	answer := strings.Repeat("abcd", 25000) // 100,000 bytes
	p := &faux.Provider{ChunkSize: 4}
	p.Push(faux.Reply(faux.Text(answer)))
	b := New(100000)
	b.CloseOnAgentEnd = true
	srv := httptest.NewServer(b)
	defer srv.Close()
	// The client follows the run live, from before its first event.
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var n int
	handler := func(ctx context.Context, e events.Event) {
		b.Handle(ctx, e)
		n++
	}
	if _, err := loop.Run(context.Background(), []providers.Message{providers.NewUserText("go")}, loop.Conversation{},
		loop.Config{Provider: p, Model: providers.Model{ID: "m"}}, handler); err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(body), "event: message_update"); got < 25000 {
		t.Fatalf("the client got %d updates, want every one", got)
	}
	bound := 4*len(answer) + 200*n
	t.Logf("%d events; wire %d bytes (bound %d)", n, len(body), bound)
	if len(body) > bound {
		t.Fatalf("%d bytes on the wire for a %d-byte answer in %d events", len(body), len(answer), n)
	}
}

// TestReloadMidRunDownloadsTheTranscript: a page that loads in the middle
// of a long streamed answer gets the conversation so far in one snapshot
// (the answer so far once, not one event per piece) even when the replay
// buffer no longer holds the answer's start; a client resuming from an id
// the buffer holds still gets every event after it.
func TestReloadMidRunDownloadsTheTranscript(t *testing.T) {
	for _, tt := range []struct {
		name     string
		maxBytes int
	}{
		{"the buffer holds the run", 0},
		{"the buffer lost the answer's start", 64 << 10},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := New(100000)
			b.MaxBytes = tt.maxBytes
			srv := httptest.NewServer(b)
			defer srv.Close()
			bl := kit.NewBuilder(providers.Model{ID: "m"})
			ctx := context.Background()
			user := providers.NewUserText("go")
			b.Handle(ctx, events.AgentStart{})
			b.Handle(ctx, events.MessageStart{Message: user})
			b.Handle(ctx, events.MessageEnd{Message: user})
			b.Handle(ctx, events.MessageStart{Message: *bl.Start().Message})
			b.Handle(ctx, events.MessageUpdate{Stream: bl.TextStart()})
			for range 25000 {
				b.Handle(ctx, events.MessageUpdate{Stream: bl.TextDelta("abcd")})
			}
			b.Close() // the streams end with what was published: the run "so far"
			read := func(lastID string) (int, string) {
				req, _ := http.NewRequest("GET", srv.URL, nil)
				if lastID != "" {
					req.Header.Set("Last-Event-ID", lastID)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				body, _ := io.ReadAll(resp.Body)
				return len(body), string(body)
			}
			n, body := read("")
			var snap struct {
				Messages  []json.RawMessage          `json:"messages"`
				Streaming providers.AssistantMessage `json:"streaming"`
				Running   bool                       `json:"running"`
			}
			_, data, _ := strings.Cut(body, "event: snapshot\ndata: ")
			data, _, _ = strings.Cut(data, "\n")
			if err := json.Unmarshal([]byte(data), &snap); err != nil {
				t.Fatalf("no snapshot: %v", err)
			}
			if n > 100000+2000 || snap.Streaming.Text() != strings.Repeat("abcd", 25000) || len(snap.Messages) != 1 || !snap.Running ||
				strings.Count(body, "event: ") != 1 {
				t.Fatalf("a page load mid-run downloaded %d bytes in %d events: %d messages, %d bytes in flight", n, strings.Count(body, "event: "), len(snap.Messages), len(snap.Streaming.Text()))
			}
			t.Logf("page load mid-run: %d bytes", n)
			if tt.maxBytes == 0 {
				resumed, rbody := read(b.epoch + "-5")
				if strings.Count(rbody, "event: message_update") != 25000 {
					t.Fatalf("a resuming client got %d updates (%d bytes)", strings.Count(rbody, "event: message_update"), resumed)
				}
				t.Logf("resuming from the message's start: %d bytes", resumed)
			}
		})
	}
}

// TestSnapshotKeepsTheConversation: a snapshot holds the messages that
// ended (the oldest dropped past MaxBytes, and counted), the tool calls
// running with their progress, and no run once it ended.
func TestSnapshotKeepsTheConversation(t *testing.T) {
	b := New(16)
	b.MaxBytes = 4000
	ctx := context.Background()
	b.Handle(ctx, events.AgentStart{})
	for i := range 100 {
		b.Handle(ctx, events.MessageEnd{Message: providers.NewUserText(fmt.Sprintf("message %03d %s", i, strings.Repeat("x", 100)))})
	}
	b.Handle(ctx, events.ToolExecutionStart{ToolCallID: "a", ToolName: "read", Args: map[string]any{"p": 1}})
	b.Handle(ctx, events.ToolExecutionStart{ToolCallID: "b", ToolName: "read"})
	b.Handle(ctx, events.ToolExecutionUpdate{ToolCallID: "b", ToolName: "read", Partial: tools.TextResult("half")})
	b.Handle(ctx, events.ToolExecutionEnd{ToolCallID: "a", ToolName: "read"})
	var snap snapshotFrame
	data := b.pending(0, true).snapshot.encode()
	if err := json.Unmarshal(data, &snap); err != nil {
		t.Fatal(err)
	}
	last := string(snap.Messages[len(snap.Messages)-1])
	if len(data) > 2*4000 || snap.Omitted == 0 || snap.Omitted+len(snap.Messages) != 100 || !strings.Contains(last, "message 099") {
		t.Fatalf("%d bytes: %d messages kept, %d omitted, last %s", len(data), len(snap.Messages), snap.Omitted, last)
	}
	if !snap.Running || len(snap.Tools) != 1 || snap.Tools[0].ID != "b" || snap.Tools[0].Partial == nil || snap.Streaming != nil {
		t.Fatalf("running %v, tools %+v, streaming %v", snap.Running, snap.Tools, snap.Streaming)
	}
	b.Handle(ctx, events.AgentEnd{})
	if err := json.Unmarshal(b.pending(0, true).snapshot.encode(), &snap); err != nil || snap.Running || len(snap.Tools) != 0 {
		t.Fatalf("after the run: running %v, tools %+v", snap.Running, snap.Tools)
	}
}
