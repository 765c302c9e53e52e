package main

import (
	"context"
	harnessbrowser "github.com/agentloop/agentloop/internal/harness/browser"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentloop/agentloop/providers"
)

func testServer(t *testing.T, slow time.Duration) (*server, *httptest.Server) {
	t.Helper()
	a, err := researchAgent(scripted(), providers.Model{ID: "scripted", Provider: "faux"}, slow)
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(a)
	s.notice = scriptedNotice // as main sets it for the scripted model
	hs := httptest.NewServer(s.handler())
	t.Cleanup(func() {
		s.close()
		hs.Close()
	})
	return s, hs
}

func TestSendRejectsBadInput(t *testing.T) {
	s, hs := testServer(t, 0)
	for _, body := range []string{``, `{}`, `{"text":"  "}`, `not json`} {
		req, _ := http.NewRequest("POST", hs.URL+"/api/send", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+s.guard.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%q: status %d", body, resp.StatusCode)
		}
	}
}

// TestOnlyTheOwnerDrivesThePage: requests another web page (or another
// user of the machine) can make are refused: a foreign Host (DNS
// rebinding), no token, a cross-site form post, a cross-origin JSON post;
// and none of them starts a run.
func TestOnlyTheOwnerDrivesThePage(t *testing.T) {
	s, hs := testServer(t, 0)
	token := "Bearer " + s.guard.Token
	for _, tc := range []struct {
		name, method, path, host, origin, ctype, auth string
		want                                          int
	}{
		{"foreign host reads events", "GET", "/api/events", "attacker.example", "", "", token, http.StatusForbidden},
		{"foreign host posts", "POST", "/api/send", "attacker.example:80", "", "application/json", token, http.StatusForbidden},
		{"no token", "POST", "/api/send", "", "", "application/json", "", http.StatusUnauthorized},
		{"no token, events", "GET", "/api/events", "", "", "", "", http.StatusUnauthorized},
		{"wrong token", "POST", "/api/stop", "", "", "application/json", "Bearer nope", http.StatusUnauthorized},
		{"cross-site form", "POST", "/api/send", "", "http://evil.example", "text/plain", token, http.StatusForbidden},
		{"text/plain from the page", "POST", "/api/send", "", "", "text/plain", token, http.StatusUnsupportedMediaType},
		{"cross-origin stop", "POST", "/api/stop", "", "http://evil.example", "application/json", token, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, hs.URL+tc.path, strings.NewReader(`{"text":"hi"}`))
			if tc.host != "" {
				req.Host = tc.host
			}
			for k, v := range map[string]string{"Origin": tc.origin, "Content-Type": tc.ctype, "Authorization": tc.auth} {
				if v != "" {
					req.Header.Set(k, v)
				}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
	if n := len(s.agent.State().Messages); n != 0 {
		t.Fatalf("a refused request started a run: %d messages", n)
	}
	// A body over the limit is refused too.
	req, _ := http.NewRequest("POST", hs.URL+"/api/send", strings.NewReader(`{"text":"`+strings.Repeat("x", 100<<10)+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("a 100 KiB body: status %d", resp.StatusCode)
	}
}

// browser starts headless Chromium for one test, with any extra options.
func browser(t *testing.T, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	return harnessbrowser.New(t, extra...)
}

func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

func text(t *testing.T, ctx context.Context, css string) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(css)))
	if err != nil {
		t.Fatalf("%s: %v", css, err)
	}
	return v
}

func send(text string) []chromedp.Action[chromedp.Void] {
	return []chromedp.Action[chromedp.Void]{chromedp.SendKeys(chromedp.ID("input"), text), chromedp.Click(chromedp.ID("send"))}
}

// TestBrowser drives the page in headless Chromium: send a message, watch
// the tool cards appear in call order and settle, reload in the middle of
// the run, and check that the page resumes without losing or repeating
// anything. A screenshot is saved in testdata/artifacts.
func TestBrowser(t *testing.T) {
	s, hs := testServer(t, 2*time.Second)
	ctx := browser(t)
	do(t, ctx, chromedp.Navigate(s.guard.URL(hs.URL+"/")), chromedp.WaitVisible(chromedp.ID("input")))
	do(t, ctx, send("tea")...)
	// The cards appear when the calls start, in call order.
	do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`.tool-card[data-call-id="call_1_3"]`)))
	ids := eval[[]string](t, ctx, `[...document.querySelectorAll('.tool-card')].map(c => c.dataset.callId)`)
	if want := []string{"call_1_1", "call_1_2", "call_1_3"}; strings.Join(ids, ",") != strings.Join(want, ",") {
		t.Fatalf("card order %v, want %v", ids, want)
	}
	// The refused call settles at once, while the slow one still runs.
	do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`.tool-card.error[data-call-id="call_1_3"]`)))
	if !eval[bool](t, ctx, `document.querySelector('.tool-card[data-call-id="call_1_1"]').classList.contains('running')`) {
		t.Fatal("the slow call ended before the reload: the reload would not be mid-run")
	}
	// Reload mid-run: the page replays the buffered events and follows live.
	do(t, ctx, chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`.tool-card[data-call-id="call_1_3"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.tool-card.done[data-call-id="call_1_1"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.msg.assistant.final`)))
	users := eval[int](t, ctx, `document.querySelectorAll('.msg.user').length`)
	cards := eval[int](t, ctx, `document.querySelectorAll('.tool-card').length`)
	finals := eval[int](t, ctx, `document.querySelectorAll('.msg.assistant.final').length`)
	if users != 1 || cards != 3 || finals != 1 {
		t.Fatalf("after the reload: %d user messages, %d cards, %d final answers", users, cards, finals)
	}
	if got := eval[[]string](t, ctx, `[...document.querySelectorAll('.tool-card')].map(c => c.dataset.callId)`); strings.Join(got, ",") != "call_1_1,call_1_2,call_1_3" {
		t.Fatalf("card order after the reload %v", got)
	}
	if final := text(t, ctx, `.msg.assistant.final`); !strings.Contains(final, "All three lookups are back") {
		t.Fatalf("final answer %q", final)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100: PNG
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("testdata", "artifacts")
	if err := os.MkdirAll(dir, 0o755); err == nil {
		path := filepath.Join(dir, "web.png")
		if err := os.WriteFile(path, shot, 0o644); err == nil {
			t.Logf("screenshot: %s", path)
		}
	}
}

// TestBrowserSteerAndStop: a message typed while the agent works steers it;
// the Stop button aborts the run.
func TestBrowserSteerAndStop(t *testing.T) {
	s, hs := testServer(t, 3*time.Second)
	ctx := browser(t)
	do(t, ctx, chromedp.Navigate(s.guard.URL(hs.URL+"/")), chromedp.WaitVisible(chromedp.ID("input")))
	do(t, ctx, send("coffee")...)
	do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`.tool-card[data-call-id="call_1_3"]`)))
	do(t, ctx, send("focus on espresso")...)
	do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`.msg.assistant.final`)))
	if got := text(t, ctx, `.msg.assistant.final`); !strings.Contains(got, "Noted: focus on espresso") {
		t.Fatalf("steering answer %q", got)
	}
	do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`#status.idle`)))
	do(t, ctx, send("tea")...)
	do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`.tool-card[data-call-id="call_8_1"]`)),
		chromedp.WaitEnabled(chromedp.ID("stop")), chromedp.Click(chromedp.ID("stop")),
		chromedp.WaitVisible(chromedp.CSS(`.msg.assistant.error`)), chromedp.WaitVisible(chromedp.CSS(`#status.idle`)))
	if got := text(t, ctx, `.msg.assistant.error`); !strings.Contains(got, "aborted") {
		t.Fatalf("after Stop: %q", got)
	}
}
