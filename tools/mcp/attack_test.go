package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/agentloop/agentloop/providers"
)

// The tests in this file replay issue #25 items 2 to 5 with variants the
// other tests do not list.

// within runs f and fails the test if it does not return in time.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
	}
}

// collidingTools is a tools/list result of names that all sanitise to a
// few bases, some already shaped like a suffixed name, some long enough
// to be cut, in the order given by rev.
func collidingTools(rev bool) string {
	var names []string
	for c := range 128 {
		if !regexp.MustCompile(`[a-zA-Z0-9_-]`).MatchString(string(rune(c))) && c != '"' && c != '\\' && c >= 0x20 {
			names = append(names, "x"+string(rune(c)))
		}
	}
	for i := 2; i < 60; i++ {
		names = append(names, fmt.Sprintf("x__%d", i), fmt.Sprintf("x_%d", i))
	}
	long := strings.Repeat("L", 70)
	for i := range 60 {
		names = append(names, long+strings.Repeat("!", i), "é"+fmt.Sprint(i), "")
	}
	if rev {
		for i, j := 0, len(names)-1; i < j; i, j = i+1, j-1 {
			names[i], names[j] = names[j], names[i]
		}
	}
	var b strings.Builder
	b.WriteString(`{"tools":[`)
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		q, _ := json.Marshal(n)
		fmt.Fprintf(&b, `{"name":%s,"inputSchema":{"type":"object"}}`, q)
	}
	b.WriteString(`]}`)
	return b.String()
}

// TestAttackCollidingNamesOnRelist: hundreds of names that collide once
// made valid, listed and then listed again in the other order while
// list_changed arrives: every listing gives distinct valid names, and
// Close returns.
func TestAttackCollidingNamesOnRelist(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var lists atomic.Int64
	var notify atomic.Pointer[func(string)]
	dial := handDial(func(send func(string), method string, id json.RawMessage) {
		switch method {
		case "notifications/initialized":
			notify.Store(&send)
			for range 50 {
				send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
			}
		case "tools/list":
			n := lists.Add(1)
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, collidingTools(n%2 == 0)))
		default:
			if id != nil {
				send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, id))
			}
		}
	})
	changed := make(chan struct{}, 1)
	var ts *Toolset
	within(t, 30*time.Second, "Connect", func() {
		var err error
		ts, err = Connect(context.Background(), Options{Logger: slog.New(slog.DiscardHandler), Limits: Limits{MaxTools: 1000}, OnChange: func() {
			select {
			case changed <- struct{}{}:
			default:
			}
		}}, Server{Name: "n", Dial: dial}, Server{Name: strings.Repeat("s", 70), Dial: dial})
		if err != nil {
			t.Error(err)
		}
	})
	if ts == nil {
		t.FailNow()
	}
	valid := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	for round := 0; round < 3; round++ {
		set, _ := ts.Tools()
		if len(set) < 500 {
			t.Fatalf("%d tools kept; refused %v", len(set), len(ts.Refused()))
		}
		seen := map[string]bool{}
		for _, tl := range set {
			if !valid.MatchString(tl.Name()) || seen[tl.Name()] {
				t.Fatalf("name %q invalid or given twice", tl.Name())
			}
			seen[tl.Name()] = true
		}
		for range 20 {
			(*notify.Load())(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
		}
		waitFor(t, changed, "no relisting")
	}
	within(t, 30*time.Second, "Close", func() { ts.Close() })
}

// TestAttackListChangedFloodDuringClose: a server that never stops
// saying its list changed does not keep Close waiting, and leaves no
// goroutine.
func TestAttackListChangedFloodDuringClose(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	flooding := make(chan struct{})
	dial := handDial(func(send func(string), method string, id json.RawMessage) {
		switch method {
		case "notifications/initialized":
			go func() {
				defer func() { recover() }() // the pipe closes under us
				close(flooding)
				for range 200_000 {
					send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
				}
			}()
		case "tools/list":
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}}`, id))
		default:
			if id != nil {
				send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, id))
			}
		}
	})
	ts := connect(t, Options{}, Server{Name: "n", Dial: dial})
	<-flooding
	within(t, 30*time.Second, "Close", func() { ts.Close() })
}

// TestAttackCallAfterClose: a call of a closed Toolset's tool fails at
// once and opens no connection (over HTTP and in memory).
func TestAttackCallAfterClose(t *testing.T) {
	h := newHostile(t, &hostile{
		page: func(w io.Writer, _ string) { writeTools(w, "t", 0, 1, "") },
		call: func(w io.Writer, _ string) { io.WriteString(w, `{"content":[{"type":"text","text":"ok"}]}`) },
	})
	var dials atomic.Int64
	hand := handDial(func(send func(string), method string, id json.RawMessage) {
		switch method {
		case "tools/list":
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"t0","inputSchema":{"type":"object"}}]}}`, id))
		default:
			if id != nil {
				send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}`, id))
			}
		}
	})
	counted := func(ctx context.Context) (sdk.Transport, error) { dials.Add(1); return hand(ctx) }
	for _, srv := range []Server{{Name: "h", URL: h.url()}, {Name: "m", Dial: counted}} {
		t.Run(srv.Name, func(t *testing.T) {
			ts := connect(t, Options{}, srv)
			if _, err := callTool(ts, "t0", nil); err != nil {
				t.Fatal(err)
			}
			ts.Close()
			<-h.idle()
			conns, d := h.conns, dials.Load()
			within(t, 10*time.Second, "a call after Close", func() {
				if _, err := callTool(ts, "t0", nil); err == nil {
					t.Error("a call after Close ran")
				}
			})
			h.mu.Lock()
			defer h.mu.Unlock()
			if h.conns != conns || dials.Load() != d {
				t.Fatal("a call after Close connected again")
			}
		})
	}
}

// TestAttackResultShapes: results within the byte bound but of every odd
// shape (structured content nested deeply, an image, an embedded blob,
// an error result, a JSON-RPC error with a long message) come back as a
// result or an error, never a crash, and the error texts the model reads
// stay bounded.
func TestAttackResultShapes(t *testing.T) {
	deep := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	calls := map[string]func(io.Writer){
		"shallow800": func(w io.Writer) { fmt.Fprintf(w, `{"content":[],"structuredContent":%s}`, deep(795)) },
		"deep9k":     func(w io.Writer) { fmt.Fprintf(w, `{"content":[],"structuredContent":%s}`, deep(9000)) },
		"deep20k":    func(w io.Writer) { fmt.Fprintf(w, `{"content":[],"structuredContent":%s}`, deep(20000)) },
		"deepText":   func(w io.Writer) { fmt.Fprintf(w, `{"content":[{"type":"text","text":"x","_meta":%s}]}`, deep(20000)) },
		"image": func(w io.Writer) {
			io.WriteString(w, `{"content":[{"type":"image","mimeType":"image/png","data":"`)
			writeRepeat(w, 'A', 4<<20)
			io.WriteString(w, `"}]}`)
		},
		"blob": func(w io.Writer) {
			io.WriteString(w, `{"content":[{"type":"resource","resource":{"uri":"f:x","mimeType":"a/b","blob":"`)
			writeRepeat(w, 'A', 4<<20)
			io.WriteString(w, `"}}]}`)
		},
		"isError": func(w io.Writer) {
			io.WriteString(w, `{"isError":true,"content":[{"type":"text","text":"`)
			writeRepeat(w, 'e', 1<<20)
			io.WriteString(w, `"}]}`)
		},
		"bogus":  func(w io.Writer) { io.WriteString(w, `{"content":[{"type":"nonsense"}]}`) },
		"string": func(w io.Writer) { io.WriteString(w, `"not an object"`) },
	}
	h := newHostile(t, &hostile{
		page: func(w io.Writer, _ string) {
			io.WriteString(w, `{"tools":[`)
			i := 0
			for name := range calls {
				if i > 0 {
					io.WriteString(w, ",")
				}
				i++
				fmt.Fprintf(w, `{"name":%q,"inputSchema":{"type":"object"}}`, name)
			}
			io.WriteString(w, `,{"name":"ok","inputSchema":{"type":"object"}}]}`)
		},
		call: func(w io.Writer, name string) {
			if f, ok := calls[name]; ok {
				f(w)
				return
			}
			io.WriteString(w, `{"content":[{"type":"text","text":"ok"}]}`)
		},
	})
	ts := connect(t, Options{Limits: Limits{MaxMessageBytes: 2 << 20}}, Server{Name: "h", URL: h.url()})
	for name := range calls {
		t.Run(name, func(t *testing.T) {
			within(t, 30*time.Second, "the call", func() {
				res, err := callTool(ts, name, nil)
				if err != nil && len(err.Error()) > 2<<20+1000 {
					t.Errorf("an error of %d bytes", len(err.Error()))
				}
				if err == nil && len(providers.TextOf(res.Content)) > 2<<20 {
					t.Errorf("a result of %d bytes", len(providers.TextOf(res.Content)))
				}
				if strings.HasPrefix(name, "deep") && (err == nil || err.Error() != TooDeepText("h", maxMessageDepth)) {
					t.Errorf("a result too deep: %.200v", err)
				}
				if name == "shallow800" && err != nil {
					t.Errorf("a result 800 deep: %v", err)
				}
			})
			if res, err := callTool(ts, "ok", nil); err != nil || providers.TextOf(res.Content) != "ok" {
				t.Fatalf("the next call: %v %v", res, err)
			}
		})
	}
}

// TestAttackRefusalMessageBounded: a server refusing a call with a
// JSON-RPC error whose message is megabytes long does not put megabytes
// in the text the model reads, and a message echoing the token sent in
// the server's headers (escaped or not) does not carry it.
func TestAttackRefusalMessageBounded(t *testing.T) {
	const token = "tok-0123456789abcdef"
	for _, tc := range []struct {
		name, msg, want string
	}{
		{"long", strings.Repeat("m", 4<<20), "n refused the call: " + strings.Repeat("m", 2048-len(" [... cut from 4194304 bytes]")) + " [... cut from 4194304 bytes]"},
		{"echoed token", "bad token Bearer " + token, "n refused the call: bad token [redacted]"},
		{"escaped token", `bad token \u0074ok-0123456789abcdef`, "n refused the call: bad token[redacted]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHostile(t, &hostile{
				page: func(w io.Writer, _ string) { writeTools(w, "t", 0, 1, "") },
				call: func(w io.Writer, _ string) {},
			})
			h.refuse = tc.msg
			ts := connect(t, Options{}, Server{Name: "n", URL: h.url(), Header: map[string][]string{"Authorization": {"Bearer " + token}}})
			_, err := callTool(ts, "t0", nil)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error of %d bytes: %.200v", len(fmt.Sprint(err)), err)
			}
		})
	}
}

// TestAttackDeepToolDefinition: one tool whose definition nests past
// maxToolDepth (the SDK decodes no message nested past 1000 levels) is
// left out and named in Refused; the tools around it, on its page, are
// kept, over a JSON body and an event stream alike.
func TestAttackDeepToolDefinition(t *testing.T) {
	// levels is the definition's nesting: its braces, inputSchema's and
	// the arrays inside.
	withDepth := func(levels int) string {
		k := levels - 2
		return `{"type":"object","x":` + strings.Repeat("[", k) + strings.Repeat("]", k) + `}`
	}
	for _, tc := range []struct {
		name   string
		schema string
		kept   bool
	}{
		{"at the bound", withDepth(maxToolDepth), true},
		{"past the bound", withDepth(maxToolDepth + 1), false},
		{"past the SDK's", withDepth(1200), false},
		{"far past it", strings.Repeat(`{"type":"object","properties":{"p":`, 20_000) + `{}` + strings.Repeat(`}}`, 20_000), false},
		{"deep in strings only", `{"type":"object","description":"` + strings.Repeat("[{", 5000) + `"}`, true},
	} {
		for _, events := range []bool{false, true} {
			t.Run(fmt.Sprint(tc.name, " events:", events), func(t *testing.T) {
				h := newHostile(t, &hostile{events: events, page: func(w io.Writer, _ string) {
					fmt.Fprintf(w, `{"tools":[{"name":"good","inputSchema":{"type":"object"}},{"name":"deep","inputSchema":%s},{"name":"after","inputSchema":{"type":"object"}}]}`, tc.schema)
				}})
				ts := connect(t, Options{}, Server{Name: "h", URL: h.url()})
				set, _ := ts.Tools()
				var names []string
				for _, tl := range set {
					names = append(names, tl.Name())
				}
				want, refused := "[good deep after]", map[string]string{}
				if !tc.kept {
					want = "[good after]"
					refused["h/deep"] = fmt.Sprintf("mcp: the definition of \"deep\" nests more than %d levels deep", maxToolDepth)
				}
				got := map[string]string{}
				for k, err := range ts.Refused() {
					got[k] = err.Error()
				}
				if fmt.Sprint(names) != want || fmt.Sprint(got) != fmt.Sprint(refused) {
					t.Fatalf("tools %v, refused %v; want %s, %v", names, got, want, refused)
				}
			})
		}
	}
}

// TestAttackDeepResultOverStdio: a result nested past what the SDK
// decodes, over stdio, reads as a call that ran and whose result was
// dropped; the process is not restarted, and serves the next call.
func TestAttackDeepResultOverStdio(t *testing.T) {
	ts := connect(t, Options{}, selfServer(t, "big"))
	pid := ts.servers[0].cmd.Process.Pid
	if _, err := callTool(ts, "deep", nil); err == nil || err.Error() != TooDeepText("big", maxMessageDepth) {
		t.Fatalf("the deep result: %v", err)
	}
	if res, err := callTool(ts, "small", nil); err != nil || providers.TextOf(res.Content) != "ok" {
		t.Fatalf("the next call: %v %v", res, err)
	}
	if now := ts.servers[0].cmd.Process.Pid; now != pid {
		t.Fatalf("the server was restarted (%d, then %d)", pid, now)
	}
}
