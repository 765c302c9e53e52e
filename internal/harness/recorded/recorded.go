// Package recorded plays the streams in ../shared/recorded (recorded from
// real model servers by others, read at test time and never copied into
// this repository) to the providers' tests, and checks what a provider
// assembled against each recording's expected result.
package recorded

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/internal/harness/needs"
	"github.com/agentloop/agentloop/providers"
)

// Dir finds ../shared/recorded beside the module's folder. Without it a
// test is skipped with a printed reason, or fails under CI (which runs with
// ../shared beside the checkout); see needs.Missing.
func Dir(t *testing.T) string {
	t.Helper()
	return needs.Shared(t, "recorded")
}

// Serve answers every request with body, written in pieces of 1 to 97
// bytes as replay.py serves it, and counts the requests. check, when not
// nil, sees each request first.
func Serve(t testing.TB, body []byte, check func(*http.Request)) (*httptest.Server, *int) {
	t.Helper()
	n := new(int)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*n++
		if check != nil {
			check(r)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		rng := rand.New(rand.NewPCG(uint64(len(body)), 7))
		for rest := body; len(rest) > 0; {
			k := min(1+rng.IntN(97), len(rest))
			_, _ = w.Write(rest[:k])
			w.(http.Flusher).Flush()
			rest = rest[k:]
		}
	}))
	t.Cleanup(srv.Close)
	return srv, n
}

// Native is the expected result of a recording of a native API
// (anthropic/, gemini/, responses/): the "expect" object of its
// NAME.expect.json, described in NATIVE.md.
type Native struct {
	Text     string   `json:"text"`
	Thinking string   `json:"thinking"`
	Opaque   []Opaque `json:"opaque"`
	Calls    []struct {
		ID           *string        `json:"id"`
		ItemID       string         `json:"item_id"`
		Name         string         `json:"name"`
		Arguments    map[string]any `json:"arguments"`
		RawArguments string         `json:"raw_arguments"`
		Complete     bool           `json:"complete"`
	} `json:"tool_calls"`
	StopReason    string   `json:"stop_reason"`
	StopReasonAlt []string `json:"stop_reason_alt"`
	Error         *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	Usage struct {
		Input      int  `json:"input"`
		Output     int  `json:"output"`
		CacheRead  int  `json:"cacheRead"`
		CacheWrite int  `json:"cacheWrite"`
		Reasoning  *int `json:"reasoning"`
		Total      int  `json:"total"`
	} `json:"usage"`
	Blocks []string `json:"blocks"`
}

// Opaque is a blob the client must keep and send back unchanged.
type Opaque struct {
	Kind             string  `json:"kind"` // thinking.signature, redacted_thinking.data, thoughtSignature, reasoning
	On               string  `json:"on"`   // for thoughtSignature: functionCall:NAME, text, emptyText, thought
	Value            string  `json:"value"`
	ItemID           string  `json:"item_id"`
	EncryptedContent *string `json:"encrypted_content"`
}

// Recording is one recorded stream and what it should give.
type Recording struct {
	Name   string
	Body   []byte
	Expect Native
}

// NativeRecordings reads every recording of one native API (a folder of
// ../shared/recorded: "anthropic", "gemini", "responses").
func NativeRecordings(t *testing.T, api string) []Recording {
	t.Helper()
	dir := filepath.Join(Dir(t), api)
	files, err := filepath.Glob(filepath.Join(dir, "*.sse"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recordings in %s (%v)", dir, err)
	}
	var out []Recording
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sse")
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(filepath.Join(dir, name+".expect.json"))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Expect Native `json:"expect"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, Recording{Name: name, Body: body, Expect: doc.Expect})
	}
	return out
}

// Check compares a provider's final message with a recording's expected
// result: text, thinking (blocks joined by a blank line), the opaque blobs
// on the blocks they belong to, tool calls (their raw argument text too
// when rawArgs: Gemini sends arguments as an object, so its text is the
// provider's own), stop reason, the server's error, usage and block order.
func Check(t *testing.T, m *providers.AssistantMessage, want Native, rawArgs bool) {
	t.Helper()
	if got := m.Text(); got != want.Text {
		t.Errorf("text %q\nwant %q", got, want.Text)
	}
	var thinking []string
	for _, c := range m.Content {
		if th, ok := c.(providers.Thinking); ok && th.Thinking != "" {
			thinking = append(thinking, th.Thinking)
		}
	}
	if got := strings.Join(thinking, "\n\n"); got != want.Thinking {
		t.Errorf("thinking %q\nwant %q", got, want.Thinking)
	}
	checkOpaque(t, m, want.Opaque)
	calls := m.ToolCalls()
	if len(calls) != len(want.Calls) {
		t.Fatalf("%d tool calls, want %d: %+v", len(calls), len(want.Calls), calls)
	}
	for i, w := range want.Calls {
		c := calls[i]
		if c.Name != w.Name || (w.ID != nil && c.ID != *w.ID) || c.ID == "" || c.Incomplete == w.Complete {
			t.Errorf("call %d: %s %q incomplete=%v, want %s %v complete=%v", i, c.Name, c.ID, c.Incomplete, w.Name, w.ID, w.Complete)
		}
		if !sameJSON(c.Arguments, w.Arguments) {
			t.Errorf("call %d arguments %v, want %v", i, c.Arguments, w.Arguments)
		}
		if rawArgs && c.RawArguments != w.RawArguments && !(w.RawArguments == "" && c.RawArguments == "{}") {
			t.Errorf("call %d raw arguments %q, want %q", i, c.RawArguments, w.RawArguments)
		}
		if w.ItemID != "" && !strings.Contains(c.Signature, w.ItemID) {
			t.Errorf("call %d: item id %s not kept (signature %q)", i, w.ItemID, c.Signature)
		}
	}
	if got := string(m.StopReason); got != want.StopReason && !slices.Contains(want.StopReasonAlt, got) {
		t.Errorf("stop reason %s, want %s (%v); error %q", got, want.StopReason, want.StopReasonAlt, m.ErrorMessage)
	}
	if want.Error != nil && !strings.Contains(m.ErrorMessage, want.Error.Message) {
		t.Errorf("error message %q, want the server's %q", m.ErrorMessage, want.Error.Message)
	}
	u, wu := m.Usage, want.Usage
	if u.Input != wu.Input || u.Output != wu.Output || u.CacheRead != wu.CacheRead || u.CacheWrite != wu.CacheWrite ||
		u.TotalTokens != wu.Total || (wu.Reasoning != nil && u.Reasoning != *wu.Reasoning) {
		t.Errorf("usage %+v, want %+v (reasoning %v)", u, wu, wu.Reasoning)
	}
	if got := blockKinds(m); !slices.Equal(got, want.Blocks) {
		t.Errorf("blocks %v, want %v", got, want.Blocks)
	}
}

// blockKinds lists the blocks as the recordings name them, runs of text
// and of thinking collapsed, empty ones left out.
func blockKinds(m *providers.AssistantMessage) []string {
	var out []string
	for _, c := range m.Content {
		var k string
		switch c := c.(type) {
		case providers.Text:
			if c.Text == "" {
				continue
			}
			k = "text"
		case providers.Thinking:
			switch {
			case c.Redacted:
				out = append(out, "redactedThinking")
				continue
			case c.Thinking == "":
				continue
			}
			k = "thinking"
		case providers.ToolCall:
			out = append(out, "toolCall")
			continue
		}
		if len(out) == 0 || out[len(out)-1] != k {
			out = append(out, k)
		}
	}
	return out
}

// checkOpaque checks that each blob is kept, in order, on a block of the
// kind it came with.
func checkOpaque(t *testing.T, m *providers.AssistantMessage, want []Opaque) {
	t.Helper()
	next := 0 // blocks before next are used
	for _, o := range want {
		value := o.Value
		if o.Kind == "reasoning" {
			value = o.ItemID
		}
		found := false
		for ; next < len(m.Content) && !found; next++ {
			sig, kind := signatureOf(m.Content[next])
			if sig == "" || !strings.Contains(sig, value) || !opaqueOn(o, kind, m.Content[next]) {
				continue
			}
			if o.EncryptedContent != nil && !strings.Contains(sig, *o.EncryptedContent) {
				t.Errorf("%s %s: encrypted content not kept", o.Kind, o.ItemID)
			}
			found = true
		}
		if !found {
			t.Errorf("opaque %s (on %q) %.40s... not kept on its block", o.Kind, o.On, value)
			return
		}
	}
}

func signatureOf(c providers.Content) (string, string) {
	switch c := c.(type) {
	case providers.Text:
		return c.Signature, "text"
	case providers.Thinking:
		return c.Signature, "thinking"
	case providers.ToolCall:
		return c.Signature, "toolCall"
	}
	return "", ""
}

func opaqueOn(o Opaque, kind string, c providers.Content) bool {
	switch o.Kind {
	case "thinking.signature", "reasoning":
		return kind == "thinking"
	case "redacted_thinking.data":
		th, ok := c.(providers.Thinking)
		return ok && th.Redacted
	}
	switch {
	case strings.HasPrefix(o.On, "functionCall:"):
		tc, ok := c.(providers.ToolCall)
		return ok && tc.Name == strings.TrimPrefix(o.On, "functionCall:")
	case o.On == "text" || o.On == "emptyText":
		return kind == "text"
	case o.On == "thought":
		return kind == "thinking"
	}
	return false
}

// sameJSON compares two JSON values as JSON (numbers by value).
func sameJSON(a, b map[string]any) bool {
	norm := func(v map[string]any) any {
		if v == nil {
			v = map[string]any{}
		}
		raw, _ := json.Marshal(v)
		var out any
		_ = json.Unmarshal(raw, &out)
		return out
	}
	return reflect.DeepEqual(norm(a), norm(b))
}
