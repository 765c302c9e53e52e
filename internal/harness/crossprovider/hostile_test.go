package crossprovider

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/internal/harness/heapwatch"
	"github.com/agentloop/agentloop/internal/harness/recorded"
	"github.com/agentloop/agentloop/internal/httpx"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
)

// hostileCase is a server misbehaving the same way on every wire.
type hostileCase struct {
	name  string
	serve func(w http.ResponseWriter, r *http.Request, hw hostileWire)
	want  string            // in the error message
	per   map[string]string // want, for a wire that differs
}

// writeUntilGone writes chunk until the client goes or size bytes went.
func writeUntilGone(w http.ResponseWriter, r *http.Request, chunk []byte, size int) {
	for n := 0; n < size && r.Context().Err() == nil; n += len(chunk) {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
}

// The servers send 32 MiB (or until the client goes) against limits of
// 256 KiB and less: a message that is not cut, or a body read whole, shows
// in the heap.
const hostileSize = 32 << 20

var hostileCases = []hostileCase{
	{"an event as short data lines", func(w http.ResponseWriter, r *http.Request, hw hostileWire) {
		shortDataLines(w, r, hw.head, hostileSize)
	}, "an SSE event passed 262144 bytes (MaxEventBytes)", nil},
	{"one long line", func(w http.ResponseWriter, r *http.Request, hw hostileWire) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, hw.head+"data: ")
		writeUntilGone(w, r, bytes.Repeat([]byte("l"), 64<<10), hostileSize)
	}, "an SSE line passed 65536 bytes (MaxLineBytes)", nil},
	{"comments without end", func(w http.ResponseWriter, r *http.Request, hw hostileWire) {
		w.Header().Set("Content-Type", "text/event-stream")
		writeUntilGone(w, r, bytes.Repeat([]byte(": ping\n"), 1000), hostileSize)
	}, "(MaxEventBytes)", nil},
	{"keep-alives without end", func(w http.ResponseWriter, r *http.Request, hw hostileWire) {
		w.Header().Set("Content-Type", "text/event-stream")
		writeUntilGone(w, r, bytes.Repeat([]byte(": ping\n\n"), 1000), hostileSize)
	}, "the response passed 1048576 bytes (MaxResponseBytes)", map[string]string{
		"gemini": "invalid stream chunk", // Gemini's SDK takes a comment for a broken chunk
	}},
	{"pings without end", func(w http.ResponseWriter, r *http.Request, hw hostileWire) {
		w.Header().Set("Content-Type", "text/event-stream")
		writeUntilGone(w, r, bytes.Repeat([]byte(hw.ping), 1000), hostileSize)
	}, "the response passed 1048576 bytes (MaxResponseBytes)", nil},
	{"a huge error event", func(w http.ResponseWriter, r *http.Request, hw hostileWire) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, hw.errorEvent(strings.Repeat("e", 48<<10))) // within MaxLineBytes
	}, "eeee [... cut from", nil},
	{"a huge chunk that is not JSON", func(w http.ResponseWriter, r *http.Request, hw hostileWire) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, hw.head+"data: {"+strings.Repeat("j", 200<<10)+"\n\n")
	}, "", nil},
	{"a huge refusal", func(w http.ResponseWriter, r *http.Request, hw hostileWire) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, hw.refusal(strings.Repeat("r", 60<<10)))
	}, "rrrr [... cut from", nil},
}

// TestHostileWires: every wire ends a misbehaving server's response with
// stop reason error and a message naming the limit passed, at most
// MaxQuotedBytes long, holding a few MB of heap at most.
func TestHostileWires(t *testing.T) {
	o := providers.HTTPOptions{MaxRetries: -1, MaxLineBytes: 64 << 10, MaxEventBytes: 256 << 10, MaxResponseBytes: 1 << 20}
	for _, hw := range hostileWires {
		for _, hc := range hostileCases {
			t.Run(hw.name+"/"+hc.name, func(t *testing.T) {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hc.serve(w, r, hw) }))
				defer srv.Close()
				p := hw.new(t, srv.URL, "k", o)
				var m *providers.AssistantMessage
				peak, base := heapwatch.Peak(time.Millisecond, func() {
					evs := recorded.Collect(t, context.Background(), p, recorded.Hi(hw.model))
					m = evs[len(evs)-1].Message
				})
				want := hc.want
				if w, ok := hc.per[hw.name]; ok {
					want = w
				}
				if m.StopReason != providers.StopReasonError || !strings.Contains(m.ErrorMessage, want) || len(m.ErrorMessage) > httpx.MaxQuotedBytes {
					t.Fatalf("%s, %d bytes: %.300q", m.StopReason, len(m.ErrorMessage), m.ErrorMessage)
				}
				if grew := peak - min(peak, base); grew > 24<<20 {
					t.Errorf("the heap grew by %d MB", grew>>20)
				}
			})
		}
	}
}

// echoes are the forms in which a hostile server echoes the key in its
// error message (inside a JSON string).
var echoes = []struct {
	name string
	echo func(key string) string
}{
	{"as is", func(k string) string { return "invalid key " + k }},
	{"one JSON escape", func(k string) string { return `invalid key \u` + fmt.Sprintf("%04x", k[0]) + k[1:] }},
	{"every character JSON-escaped", func(k string) string { return everyChar(k, `\u%04X`) }},
	{"escaped twice", func(k string) string { return everyChar(k, `\\u%04x`) }},
	{"URL-escaped", func(k string) string { return "key=" + everyChar(k, "%%%02X") }},
	{"URL-escaped twice", func(k string) string { return "key=" + everyChar(k, "%%25%02x") }},
	{"as HTML references", func(k string) string { return everyChar(k, "&#%d;") }},
	{"upper case", func(k string) string { return "KEY " + strings.ToUpper(k) }},
	{"half of it", func(k string) string { return "key ends in " + k[len(k)/2:] }},
	{"base64 in a header", func(k string) string {
		return "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("user:"+k))
	}},
	{"hex", func(k string) string { return "key " + hex.EncodeToString([]byte(k)) }},
	{"across the cut", func(k string) string { return strings.Repeat("a", httpx.MaxQuotedBytes-40) + k }},
	{"across the window", func(k string) string { return strings.Repeat("a", 4*httpx.MaxQuotedBytes-30) + k }},
}

func everyChar(s, format string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		fmt.Fprintf(&b, format, c)
	}
	return b.String()
}

const hostileKey = "sk-ant-api03-Zq8XwJt4Lm2Rv7Kc9Bn1Hy6Gd3Fs5Pa0Ue8Oi4Wl7Tk2Mx9Nb5Vc"

// TestKeyNeverLeaks: a server that echoes the key, in any form, in a
// refusal or an error event, gets none of it (no 8 characters in a row)
// into the error message, the events or a saved session.
func TestKeyNeverLeaks(t *testing.T) {
	for _, hw := range hostileWires {
		for _, path := range []string{"refusal", "error event"} {
			for _, e := range echoes {
				t.Run(hw.name+"/"+path+"/"+e.name, func(t *testing.T) {
					msg := e.echo(hostileKey)
					srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						if path == "refusal" {
							w.Header().Set("Content-Type", "application/json")
							w.WriteHeader(http.StatusUnauthorized)
							fmt.Fprint(w, hw.refusal(msg))
							return
						}
						w.Header().Set("Content-Type", "text/event-stream")
						fmt.Fprint(w, hw.errorEvent(msg))
					}))
					defer srv.Close()
					a, err := agent.New(agent.Options{Config: loop.Config{
						Provider: hw.new(t, srv.URL, hostileKey, providers.HTTPOptions{MaxRetries: -1}), Model: hw.model}})
					if err != nil {
						t.Fatal(err)
					}
					var wire bytes.Buffer
					a.Subscribe(func(_ context.Context, ev events.Event) {
						raw, _ := events.MarshalWire(ev)
						wire.Write(raw)
					})
					if err := a.Prompt(context.Background(), providers.NewUserText("hi")); err == nil {
						t.Fatal("the run did not fail")
					}
					var session bytes.Buffer
					if err := a.SaveSession(&session); err != nil {
						t.Fatal(err)
					}
					msgs := a.State().Messages
					last, _ := msgs[len(msgs)-1].(providers.AssistantMessage)
					if last.StopReason != providers.StopReasonError || len(last.ErrorMessage) > httpx.MaxQuotedBytes {
						t.Fatalf("%s, %d bytes: %.200q", last.StopReason, len(last.ErrorMessage), last.ErrorMessage)
					}
					for where, text := range map[string]string{"message": last.ErrorMessage, "events": wire.String(), "session": session.String()} {
						if run := keyRun(text, hostileKey); run != "" {
							t.Errorf("the %s carries %q of the key: %.200q", where, run, last.ErrorMessage)
						}
					}
				})
			}
		}
	}
}

var (
	uEscape   = regexp.MustCompile(`\\+u([0-9a-fA-F]{4})`)
	pctEscape = regexp.MustCompile(`%([0-9a-fA-F]{2})`)
)

// keyRun returns 8 characters of key in a row found in text, or in text
// with its escapes decoded (up to three layers), or in its base64 or hex.
func keyRun(text, key string) string {
	forms := []string{strings.ToLower(key), hex.EncodeToString([]byte(key))}
	for align := range 3 {
		s := base64.StdEncoding.EncodeToString(append(make([]byte, align), key...))
		forms = append(forms, strings.ToLower(s[4:len(s)-4]))
	}
	for range 4 {
		low := strings.ToLower(text)
		for _, f := range forms {
			for i := 0; i+8 <= len(f); i++ {
				if strings.Contains(low, f[i:i+8]) {
					return f[i : i+8]
				}
			}
		}
		text = uEscape.ReplaceAllStringFunc(text, func(m string) string {
			n, _ := strconv.ParseUint(m[len(m)-4:], 16, 32)
			return string(rune(n))
		})
		text = pctEscape.ReplaceAllStringFunc(text, func(m string) string {
			n, _ := strconv.ParseUint(m[1:], 16, 8)
			return string(rune(n))
		})
		text = html.UnescapeString(text)
	}
	return ""
}
