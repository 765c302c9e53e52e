package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/providers"
)

// TestQuickstartOffline plays the scripted conversation and checks what
// the example advertises: the policy blocks the note outside ./notes, the
// invalid weather call is refused with the validation listing and then
// runs with corrected arguments, results stay in call order, and the final
// answer arrives.
func TestQuickstartOffline(t *testing.T) {
	msgs, err := run(context.Background(), io.Discard, true)
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		isError bool
		text    string // a prefix of the result's text
	}
	want := map[string]outcome{
		"call_1": {false, "Oslo: 4°C"},
		"call_2": {false, ""},
		"call_3": {true, `Validation failed for tool "weather"`},
		"call_4": {true, "notes must stay inside ./notes; /etc/motd is outside"},
		"call_5": {false, "Bergen: 7°C, light rain"},
		"call_6": {false, "saved 22 bytes to notes/weather.txt"},
	}
	var order []string
	for _, m := range msgs {
		tr, ok := m.(providers.ToolResultMessage)
		if !ok {
			continue
		}
		order = append(order, tr.ToolCallID)
		w := want[tr.ToolCallID]
		if tr.IsError != w.isError || !strings.HasPrefix(tr.Text(), w.text) {
			t.Errorf("%s: error=%v %q, want error=%v and a text starting %q", tr.ToolCallID, tr.IsError, tr.Text(), w.isError, w.text)
		}
	}
	if got := strings.Join(order, ","); got != "call_1,call_2,call_3,call_4,call_5,call_6" {
		t.Errorf("results in the order %s", got)
	}
	for _, field := range []string{"city", "must have required propert", "unit"} {
		if res := resultText(msgs, "call_3"); !strings.Contains(res, field) {
			t.Errorf("the validation listing does not mention %q:\n%s", field, res)
		}
	}
	final, ok := msgs[len(msgs)-1].(providers.AssistantMessage)
	if !ok || final.StopReason != providers.StopReasonStop || !strings.Contains(final.Text(), "Oslo is 4°C and Bergen 7°C") {
		t.Fatalf("final message %#v", msgs[len(msgs)-1])
	}
}

func resultText(msgs []providers.Message, id string) string {
	for _, m := range msgs {
		if tr, ok := m.(providers.ToolResultMessage); ok && tr.ToolCallID == id {
			return tr.Text()
		}
	}
	return ""
}

// TestQuickstartTalksToOpenAICompatibleServer: with OPENAI_API_KEY and
// OPENAI_BASE_URL set, the quickstart sends its conversation to that
// server (a Chat Completions stream here) and names the model and the
// endpoint, never the key.
func TestQuickstartTalksToOpenAICompatibleServer(t *testing.T) {
	const key = "sk-quickstart-secret"
	var gotModel, gotAuth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string `json:"model"`
		}
		_ = json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req)
		gotModel, gotAuth = req.Model, r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "text/event-stream")
		for _, chunk := range []string{
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Oslo is rainy."},"finish_reason":null}]}`,
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			`[DONE]`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", chunk)
		}
	}))
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", key)
	t.Setenv("OPENAI_BASE_URL", srv.URL)
	t.Setenv("OPENAI_MODEL", "local-model")
	var out strings.Builder
	msgs, err := run(context.Background(), &out, false)
	if err != nil {
		t.Fatal(err)
	}
	if gotModel != "local-model" || gotAuth != "Bearer "+key {
		t.Errorf("the server got model %q, authorization %q", gotModel, gotAuth)
	}
	if first, _, _ := strings.Cut(out.String(), "\n"); first != "agentloop quickstart: using local-model at "+srv.URL {
		t.Errorf("first line %q", first)
	}
	if strings.Contains(out.String(), "quickstart-secret") {
		t.Error("the output shows the key")
	}
	if final, ok := msgs[len(msgs)-1].(providers.AssistantMessage); !ok || final.Text() != "Oslo is rainy." {
		t.Errorf("final message %#v", msgs[len(msgs)-1])
	}
}

// TestQuickstartLinksOnlyOpenAI: the README's first command compiles the
// OpenAI provider and nothing of the other SDKs (Anthropic's, Gemini's
// and what they bring: gRPC, protobuf, OpenTelemetry), which is what keeps
// its first build quick and small.
func TestQuickstartLinksOnlyOpenAI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, heavy := range []string{"github.com/anthropics/", "google.golang.org/", "go.opentelemetry.io/", "cloud.google.com/", "/providers/anthropic", "/providers/gemini", "/providers/auto"} {
			if strings.Contains(pkg, heavy) {
				t.Errorf("the quickstart links %s", pkg)
			}
		}
	}
}
