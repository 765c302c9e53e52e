package main

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/agentloop/agentloop/providers"
)

// TestBrowserEmptyStateAndNotice: before the first message the page says
// what to do, and that a scripted model answers; the hint goes with the
// first message and the notice stays. A server with no notice shows none.
func TestBrowserEmptyStateAndNotice(t *testing.T) {
	s, hs := testServer(t, 0)
	ctx := browser(t)
	do(t, ctx, chromedp.Navigate(s.guard.URL(hs.URL+"/")), chromedp.WaitVisible(chromedp.ID("empty")), chromedp.WaitVisible(chromedp.ID("notice")))
	if hint := text(t, ctx, "#empty"); !strings.Contains(hint, "No messages yet") || !strings.Contains(hint, "Send") {
		t.Fatalf("empty-state hint %q", hint)
	}
	if got := text(t, ctx, "#notice"); got != scriptedNotice {
		t.Fatalf("notice %q, want %q", got, scriptedNotice)
	}
	do(t, ctx, send("tea")...)
	do(t, ctx, chromedp.WaitVisible(chromedp.CSS(".msg.user")), chromedp.WaitNotVisible(chromedp.ID("empty")))
	if !eval[bool](t, ctx, `getComputedStyle(document.getElementById('notice')).display !== 'none'`) {
		t.Fatal("the notice went away with the first message")
	}
	// A reload mid-conversation rebuilds the log from the snapshot: no hint.
	do(t, ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(".msg.user")), chromedp.WaitVisible(chromedp.ID("notice")))
	if eval[bool](t, ctx, `getComputedStyle(document.getElementById('empty')).display !== 'none'`) {
		t.Fatal("the empty-state hint shows beside the conversation")
	}

	// A real model: no notice, the hint still.
	a, err := researchAgent(scripted(), providers.Model{ID: "scripted", Provider: "faux"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	plain := newServer(a)
	phs := httptest.NewServer(plain.handler())
	t.Cleanup(func() { plain.close(); phs.Close() })
	do(t, ctx, chromedp.Navigate(plain.guard.URL(phs.URL+"/")), chromedp.WaitVisible(chromedp.ID("empty")),
		chromedp.WaitVisible(chromedp.CSS(`body[data-info="loaded"]`)))
	if eval[bool](t, ctx, `!document.getElementById('notice').hidden`) {
		t.Fatalf("a notice without one set: %q", text(t, ctx, "#notice"))
	}
}
