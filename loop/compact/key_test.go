package compact

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
)

// TestSummaryUsesTheCallsKey: the summary request a compactor makes
// carries the key of the model call it compacts for (a GetAPIKey hook's),
// like that call, and not the provider's own.
func TestSummaryUsesTheCallsKey(t *testing.T) {
	var mu sync.Mutex
	var turns int
	keys := map[bool][]string{} // summary request or not: the keys they carried
	p := &faux.Provider{Default: func(_ context.Context, req *providers.Request) (providers.AssistantMessage, error) {
		mu.Lock()
		defer mu.Unlock()
		summary := req.SystemPrompt == DefaultSummaryPrompt
		keys[summary] = append(keys[summary], req.APIKey)
		if summary {
			return faux.Reply(faux.Text("SUMMARY")), nil
		}
		return faux.Reply(faux.Text(strings.Repeat("an answer of some length. ", 20))), nil
	}}
	hook := func(context.Context, string) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		turns++
		return fmt.Sprint("rotated-", turns), nil
	}
	cfg := loop.Config{Provider: p, Model: providers.Model{ID: "m"}, Compactor: Summarize{Window: 800, KeepTurns: 2},
		Hooks: []loop.Hooks{{GetAPIKey: hook}}}
	var transcript []providers.Message
	for i := range 8 {
		prompt := providers.NewUserText(fmt.Sprintf("question %d: %s", i, strings.Repeat("words ", 30)))
		msgs, err := loop.Run(context.Background(), []providers.Message{prompt}, loop.Conversation{Messages: transcript}, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		transcript = append(transcript, msgs...)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keys[true]) == 0 {
		t.Fatal("no summary was asked for")
	}
	for i, k := range keys[false] {
		if want := fmt.Sprint("rotated-", i+1); k != want {
			t.Fatalf("model call %d: key %q, want %q", i+1, k, want)
		}
	}
	calls := map[string]bool{}
	for _, k := range keys[false] {
		calls[k] = true
	}
	for _, k := range keys[true] {
		if !calls[k] {
			t.Fatalf("a summary request's key %q is no model call's (%v)", k, keys[false])
		}
	}
}
