package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentloop/agentloop/internal/harness/heapwatch"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/tools"
)

// TestListingBounds: hostile listings end within Limits, keep what came
// first in the server's order, and say in Refused what was left out.
func TestListingBounds(t *testing.T) {
	endless := func(perPage int) func(io.Writer, string) {
		return func(w io.Writer, cursor string) {
			p, _ := strconv.Atoi(cursor)
			writeTools(w, "t", p*perPage, perPage, strconv.Itoa(p+1))
		}
	}
	tests := []struct {
		name    string
		limits  Limits
		page    func(io.Writer, string)
		tools   []string // the first tools kept, in order
		count   int      // tools kept
		lists   int64    // tools/list requests, at most
		refused map[string]string
	}{
		{
			name: "pages that never end", limits: Limits{MaxPages: 5}, page: endless(1),
			tools: []string{"t0", "t1", "t2", "t3", "t4"}, count: 5, lists: 5,
			refused: map[string]string{"h/*": `mcp: server "h" named a page of tools past the 5 read (Limits.MaxPages); the tools of those pages are kept`},
		},
		{
			name: "empty pages that never end", limits: Limits{}, page: endless(0),
			count: 0, lists: DefaultMaxPages,
			refused: map[string]string{"h/*": `mcp: server "h" named a page of tools past the 100 read (Limits.MaxPages); the tools of those pages are kept`},
		},
		{
			name: "more tools than kept", limits: Limits{MaxTools: 250}, page: endless(100),
			tools: []string{"t0", "t1"}, count: 250, lists: 3,
			refused: map[string]string{"h/*": `mcp: server "h" lists more than 250 tools (Limits.MaxTools); the first 250 are kept`},
		},
		{
			name: "default tools per server", page: endless(1000),
			count: DefaultMaxTools, lists: 1,
			refused: map[string]string{"h/*": `mcp: server "h" lists more than 128 tools (Limits.MaxTools); the first 128 are kept`},
		},
		{
			name: "tens of thousands in one page", page: func(w io.Writer, _ string) { writeTools(w, "t", 0, 20_000, "") },
			tools: []string{"t0", "t1"}, count: DefaultMaxTools, lists: 1,
			refused: map[string]string{"h/*": `mcp: server "h" lists more than 128 tools (Limits.MaxTools); the first 128 are kept`},
		},
		{
			name: "a tool too large", limits: Limits{MaxToolBytes: 64 << 10}, page: func(w io.Writer, _ string) { writeBigSchema(w, 1<<20) },
			tools: []string{"small"}, count: 1, lists: 1,
			refused: map[string]string{"h/big": `mcp: the definition of "big" has 1048639 bytes, more than the 65536 allowed (Limits.MaxToolBytes)`},
		},
		{
			name: "a name too large", page: func(w io.Writer, _ string) {
				fmt.Fprintf(w, `{"tools":[{"name":"%s","inputSchema":{"type":"object"}},{"name":"small","inputSchema":{"type":"object"}}]}`, strings.Repeat("n", 200<<10))
			},
			tools: []string{"small"}, count: 1, lists: 1,
			refused: map[string]string{"h/" + strings.Repeat("n", 64) + "...": `mcp: the definition of "` + strings.Repeat("n", 64) + `..." has 204817 bytes, more than the 131072 allowed (Limits.MaxToolBytes)`},
		},
		{
			name: "a page too large for one tool", limits: Limits{MaxMessageBytes: 1 << 20}, page: func(w io.Writer, cursor string) {
				if cursor == "" {
					writeTools(w, "t", 0, 3, "next")
					return
				}
				writeBigSchema(w, 2<<20)
			},
			tools: []string{"t0", "t1", "t2", "small"}, count: 4, lists: 2,
			refused: map[string]string{"h/big": `mcp: the definition of "big" has 2097215 bytes, more than the 131072 allowed (Limits.MaxToolBytes)`},
		},
		{
			name: "a page too large for its tools", limits: Limits{MaxMessageBytes: 64 << 10, MaxTools: 5000}, page: func(w io.Writer, cursor string) {
				writeTools(w, "t", 0, 2000, "next")
			},
			tools: []string{"t0", "t1", "t2"}, count: 675, lists: 1,
			refused: map[string]string{"h/*": `mcp: server "h" sent page 1 of its tools in 170955 bytes, more than the 65536 allowed (Limits.MaxMessageBytes); the 1325 tools after the first 675 of the page are left out, and the pages after it`},
		},
		{
			name: "an answer too large that is no page", limits: Limits{MaxMessageBytes: 64 << 10}, page: func(w io.Writer, cursor string) {
				if cursor == "" {
					writeTools(w, "t", 0, 3, "next")
					return
				}
				io.WriteString(w, `{"other":"`)
				writeRepeat(w, 'o', 100<<10)
				io.WriteString(w, `"}`)
			},
			tools: []string{"t0", "t1", "t2"}, count: 3, lists: 2,
			refused: map[string]string{"h/*": `mcp: server "h" sent page 2 of its tools in 102446 bytes, more than the 65536 allowed (Limits.MaxMessageBytes); the tools of the pages before it are kept`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHostile(t, &hostile{page: tt.page})
			ts := connect(t, Options{Limits: tt.limits}, Server{Name: "h", URL: h.url()})
			set, _ := ts.Tools()
			if len(set) != tt.count {
				t.Fatalf("%d tools kept, want %d", len(set), tt.count)
			}
			for i, name := range tt.tools {
				if set[i].Name() != name {
					t.Fatalf("tool %d is %q, want %q", i, set[i].Name(), name)
				}
			}
			if n := h.lists.Load(); n > tt.lists {
				t.Fatalf("%d tools/list requests, want at most %d", n, tt.lists)
			}
			refused := map[string]string{}
			for k, err := range ts.Refused() {
				refused[k] = err.Error()
			}
			if fmt.Sprint(refused) != fmt.Sprint(tt.refused) {
				t.Fatalf("refused:\n%v\nwant\n%v", refused, tt.refused)
			}
		})
	}
}

// TestResultTooLarge: a result past Limits.MaxMessageBytes, over
// streamable HTTP (a JSON body and an event stream) and over stdio, is
// never held whole: the model reads that the call ran and its result
// was dropped, and the connection serves the next call.
func TestResultTooLarge(t *testing.T) {
	const limit, size = 1 << 20, 12 << 20
	jsonBody := newHostile(t, &hostile{
		page: func(w io.Writer, _ string) { writeTools(w, "t", 0, 2, "") },
		call: func(w io.Writer, name string) {
			if name == "t0" {
				writeBigText(w, size)
				return
			}
			io.WriteString(w, `{"content":[{"type":"text","text":"ok"}]}`)
		},
	})
	stream := newHostile(t, &hostile{
		page: func(w io.Writer, _ string) { writeTools(w, "t", 0, 2, "") },
		call: func(w io.Writer, name string) {
			if name == "t0" {
				writeBigText(w, size)
				return
			}
			io.WriteString(w, `{"content":[{"type":"text","text":"ok"}]}`)
		},
		events: true,
	})
	tests := []struct {
		name       string
		server     Server
		big, small string
		args       map[string]any
	}{
		{"http json", Server{Name: "h", URL: jsonBody.url()}, "t0", "t1", nil},
		{"http event stream", Server{Name: "h", URL: stream.url()}, "t0", "t1", nil},
		{"stdio", selfServer(t, "big"), "big", "small", map[string]any{"n": size}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			ts := connect(t, Options{Limits: Limits{MaxMessageBytes: limit}}, tt.server)
			defer func() { // nothing left: no goroutine, process or connection
				ts.Close()
				if cmd := ts.servers[0].cmd; cmd != nil && cmd.ProcessState == nil {
					t.Errorf("the process %d still runs", cmd.Process.Pid)
				}
				for _, h := range []*hostile{jsonBody, stream} {
					select {
					case <-h.idle():
					case <-time.After(10 * time.Second):
						t.Errorf("%d connections open after Close", h.openConns())
					}
				}
			}()
			var err error
			peak, base := heapwatch.Peak(time.Millisecond, func() {
				_, err = callTool(ts, tt.big, tt.args)
			})
			var want string
			if err != nil {
				want = TooLargeText(tt.server.Name, 0, limit)
				want = want[:strings.Index(want, "(")]
			}
			if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), fmt.Sprintf("is larger than the %d bytes allowed and was dropped", limit)) {
				t.Fatalf("the large result: %v", err)
			}
			if grew := int64(peak) - int64(base); grew > size/2 {
				t.Fatalf("the heap grew by %d bytes for a result of %d", grew, size)
			}
			if res, err := callTool(ts, tt.small, nil); err != nil || providers.TextOf(res.Content) != "ok" {
				t.Fatalf("the next call: %v %v", res, err)
			}
		})
	}
}

// callTool runs a tool of the set by its name, as the loop would.
func callTool(ts *Toolset, name string, args map[string]any) (tools.Result, error) {
	set, _ := ts.Tools()
	for _, tl := range set {
		if tl.Name() == name {
			if args == nil {
				args = map[string]any{}
			}
			inv, err := tl.Check(args)
			if err != nil {
				return tools.Result{}, err
			}
			return inv.Run(context.Background())
		}
	}
	return tools.Result{}, fmt.Errorf("no tool %q", name)
}

// TestListChangedCoalesced: thousands of list_changed notifications make
// a few tools/list requests, on a bounded number of goroutines, and the
// set ends as the server's last listing.
func TestListChangedCoalesced(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const notes = 5000
	var lists, sent atomic.Int64
	var peak atomic.Int64
	base := runtime.NumGoroutine()
	dial := handDial(func(send func(string), method string, id json.RawMessage) {
		switch method {
		case "notifications/initialized":
			for i := range notes {
				send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
				sent.Add(1)
				if i%100 == 0 {
					peak.Store(max(peak.Load(), int64(runtime.NumGoroutine())))
				}
			}
		case "tools/list":
			lists.Add(1)
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"v%d","inputSchema":{"type":"object"}}]}}`, id, sent.Load()))
		default:
			if id != nil {
				send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, id))
			}
		}
	})
	changed := make(chan struct{}, 1)
	ts, err := Connect(context.Background(), Options{Logger: slog.New(slog.DiscardHandler), OnChange: func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}}, Server{Name: "n", Dial: dial})
	if err != nil {
		t.Fatal(err)
	}
	final := fmt.Sprint("v", notes)
	for {
		if set, _ := ts.Tools(); len(set) == 1 && set[0].Name() == final {
			break
		}
		waitFor(t, changed, "the last listing never reached the set")
	}
	if n := lists.Load(); n > 10 {
		t.Fatalf("%d notifications made %d tools/list requests", notes, n)
	}
	if p := peak.Load(); p > int64(base)+50 {
		t.Fatalf("goroutines peaked at %d (%d before)", p, base)
	}
	if err := ts.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestHTTPConnectionsClosed: Close leaves no connection open, however
// many times a Toolset is made and closed.
func TestHTTPConnectionsClosed(t *testing.T) {
	h := newHostile(t, &hostile{
		page: func(w io.Writer, _ string) { writeTools(w, "t", 0, 1, "") },
		call: func(w io.Writer, _ string) { io.WriteString(w, `{"content":[{"type":"text","text":"ok"}]}`) },
	})
	for range 5 {
		ts := connect(t, Options{}, Server{Name: "h", URL: h.url()})
		if _, err := callTool(ts, "t0", nil); err != nil {
			t.Fatal(err)
		}
		if err := ts.Close(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-h.idle():
		case <-time.After(10 * time.Second):
			t.Fatalf("%d connections open after Close", h.openConns())
		}
	}
}

// TestHTTPReconnectsShareConnections: each connection made again after
// one broke (a garbled answer) reuses the Toolset's HTTP connections
// instead of leaving the last one's open.
func TestHTTPReconnectsShareConnections(t *testing.T) {
	h := newHostile(t, &hostile{
		page: func(w io.Writer, _ string) { writeTools(w, "t", 0, 2, "") },
		call: func(w io.Writer, name string) {
			if name == "t1" {
				io.WriteString(w, "garbled")
				return
			}
			io.WriteString(w, `{"content":[{"type":"text","text":"ok"}]}`)
		},
	})
	ts := connect(t, Options{}, Server{Name: "h", URL: h.url()})
	for range 5 {
		if _, err := callTool(ts, "t1", nil); err == nil || err.Error() != LostText("h") {
			t.Fatalf("the garbled call: %v", err)
		}
		if res, err := callTool(ts, "t0", nil); err != nil || providers.TextOf(res.Content) != "ok" {
			t.Fatalf("after reconnecting: %v %v", res, err)
		}
	}
	if !h.settlesAtMost(2, 10*time.Second) {
		t.Fatalf("%d connections open after 5 reconnections", h.openConns())
	}
	if err := ts.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.idle():
	case <-time.After(10 * time.Second):
		t.Fatalf("%d connections open after Close", h.openConns())
	}
}

// TestStartupDeath: a stdio server that dies before it answers, or
// before it lists its tools, says why: its exit status and the end of
// its standard error are in the error.
func TestStartupDeath(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	_, err := Connect(context.Background(), Options{Logger: slog.New(slog.DiscardHandler)}, selfServer(t, "die"))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`mcp: server "die": connecting: `, "the process ended (exit status 3)", `its standard error ends: "starting up\nfatal: no configuration at /etc/demo.conf"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q is not in %q", want, err)
		}
	}
	_, err = Connect(context.Background(), Options{Logger: slog.New(slog.DiscardHandler)}, selfServer(t, "dielist"))
	for _, want := range []string{`mcp: server "dielist": listing tools: `, "the process ended (exit status 4)", `its standard error ends: "fatal: lost the database"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q is not in %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "mcp: mcp:") {
		t.Errorf("a doubled prefix: %q", err)
	}
}

// TestListTimeout: a server that never answers tools/list cannot hold
// Connect past Limits.ListTimeout, even with a context without deadline.
func TestListTimeout(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	silent := handDial(func(send func(string), method string, id json.RawMessage) {
		if method != "tools/list" && id != nil {
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, id))
		}
	})
	done := make(chan error, 1)
	go func() {
		_, err := Connect(context.Background(), Options{Logger: slog.New(slog.DiscardHandler), Limits: Limits{ListTimeout: 2 * time.Second}}, Server{Name: "s", Dial: silent})
		done <- err
	}()
	select {
	case err := <-done:
		// (On a loaded machine the deadline may come while connecting.)
		if err == nil || !strings.HasPrefix(err.Error(), `mcp: server "s": `) || !strings.Contains(err.Error(), "deadline exceeded") {
			t.Fatalf("err %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Connect waited past its ListTimeout")
	}
}

// TestCommandMissing: a command that cannot start says so, and only so.
func TestCommandMissing(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	_, err := Connect(context.Background(), Options{Logger: slog.New(slog.DiscardHandler)}, Server{Name: "x", Command: "/nonexistent/mcp-server"})
	if err == nil || !strings.HasPrefix(err.Error(), `mcp: server "x": connecting: `) || !strings.Contains(err.Error(), "no such file") || strings.Contains(err.Error(), "process") {
		t.Fatalf("err %v", err)
	}
}

// TestListingHeap: a page of 20,000 tools (1.7 MB) costs a few MB, not
// the SDK's decoding of every tool (BenchmarkHostileOnePage has the
// full-size figures).
func TestListingHeap(t *testing.T) {
	h := newHostile(t, &hostile{page: func(w io.Writer, _ string) { writeTools(w, "t", 0, 20_000, "") }})
	var ts *Toolset
	peak, base := heapwatch.Peak(time.Millisecond, func() {
		ts = connect(t, Options{}, Server{Name: "h", URL: h.url()})
	})
	if grew := int64(peak) - int64(base); grew > 24<<20 {
		t.Fatalf("the heap grew by %d bytes for a page of 1.7 MB", grew)
	}
	if set, _ := ts.Tools(); len(set) != DefaultMaxTools {
		t.Fatalf("%d tools", len(set))
	}
}
