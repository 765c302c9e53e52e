package main

import (
	"context"
	"iter"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/kit"
)

// halfway streams one long answer in 4-byte pieces and stops halfway
// until released, so that a test can reload the page mid-answer.
type halfway struct {
	answer  string
	half    chan struct{} // closed once half the answer has streamed
	release chan struct{}
}

func (h *halfway) Stream(ctx context.Context, req *providers.Request) (iter.Seq[providers.StreamEvent], error) {
	return func(yield func(providers.StreamEvent) bool) {
		b := kit.NewBuilder(req.Model)
		if !yield(b.Start()) {
			return
		}
		mid := len(h.answer) / 2
		for i := 0; i < len(h.answer); i += 4 {
			if i == mid {
				close(h.half)
				select {
				case <-h.release:
				case <-ctx.Done():
					yield(b.Fail(providers.StopReasonAborted, providers.AbortedMessage, providers.Usage{}))
					return
				}
			}
			if !yield(b.TextDelta(h.answer[i : i+4])) {
				return
			}
		}
		yield(b.Done(providers.StopReasonStop, providers.Usage{}))
	}, nil
}

// counted records the bytes each /api/events response wrote.
type counted struct {
	next http.Handler
	mu   sync.Mutex
	sent []*int
}

func (c *counted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/events" {
		c.next.ServeHTTP(w, r)
		return
	}
	n := new(int)
	c.mu.Lock()
	c.sent = append(c.sent, n)
	c.mu.Unlock()
	c.next.ServeHTTP(&countingWriter{ResponseWriter: w, c: c, n: n}, r)
}

// bytes reports what the i-th events response has written so far.
func (c *counted) bytes(i int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if i >= len(c.sent) {
		return -1
	}
	return *c.sent[i]
}

type countingWriter struct {
	http.ResponseWriter
	c *counted
	n *int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.c.mu.Lock()
	*w.n += len(p)
	w.c.mu.Unlock()
	return w.ResponseWriter.Write(p)
}

func (w *countingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// TestBrowserReloadMidAnswer: a page reloaded in the middle of a 100 KB
// answer streamed in 4-byte pieces shows the same text at once, then the
// rest live, and the reload downloads the answer so far once (a snapshot),
// not one event per piece.
func TestBrowserReloadMidAnswer(t *testing.T) {
	answer := strings.Repeat("tea and biscuits, ", 5556)[:100000]
	p := &halfway{answer: answer, half: make(chan struct{}), release: make(chan struct{})}
	a, err := agent.New(agent.Options{Config: loop.Config{Provider: p, Model: providers.Model{ID: "long", Provider: "faux"}}})
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(a)
	c := &counted{next: s.handler()}
	hs := httptest.NewServer(c)
	t.Cleanup(func() {
		select {
		case <-p.release:
		default:
			close(p.release)
		}
		s.close()
		hs.Close()
	})
	ctx := browser(t)
	do(t, ctx, chromedp.Navigate(s.guard.URL(hs.URL+"/")), chromedp.WaitVisible(chromedp.ID("input")))
	do(t, ctx, send("long")...)
	<-p.half
	const half = 50000
	poll := func(js string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(50e6))); err != nil {
			t.Fatalf("%s: %v", js, err)
		}
	}
	bubble := `(document.querySelector('.msg.assistant[data-streaming]') || {textContent: ''}).textContent`
	poll(bubble + `.length === ` + "50000")
	before := eval[string](t, ctx, bubble)
	do(t, ctx, chromedp.Reload())
	poll(bubble + `.length === ` + "50000")
	if after := eval[string](t, ctx, bubble); after != before || after != answer[:half] {
		t.Fatalf("after the reload the page shows %d bytes, before %d", len(after), len(before))
	}
	reload := c.bytes(1)
	t.Logf("reload mid-answer: %d bytes for %d bytes of answer so far", reload, half)
	if reload < half || reload > half+4096 {
		t.Fatalf("the reload downloaded %d bytes, want the %d-byte answer so far and a small fixed cost", reload, half)
	}
	close(p.release)
	poll(`!!document.querySelector('.msg.assistant.final')`)
	if final := text(t, ctx, `.msg.assistant.final`); final != answer {
		t.Fatalf("final answer: %d bytes, want %d", len(final), len(answer))
	}
}

// TestBrowserRefusesOtherOrigins: in Chromium, a page from another origin
// (another port of the same machine: the same site, so the token's cookie
// goes along) can neither start nor stop a run with a form post or fetch,
// nor read the event stream (the owner's run goes on to its answer); and
// the page itself, reached through a
// foreign host name that resolves to the server (DNS rebinding), is
// refused.
func TestBrowserRefusesOtherOrigins(t *testing.T) {
	s, hs := testServer(t, 2*time.Second)
	target := hs.URL
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!doctype html><body>
<form id="f" method="POST" action="` + target + `/api/send" enctype="text/plain"><input name='{"text":"pwned","x":"' value='"}'></form>
<script>
window.results = [];
const run = async () => {
  for (const [path, init] of [
    ["/api/send", {method: "POST", mode: "no-cors", credentials: "include", headers: {"Content-Type": "text/plain"}, body: '{"text":"pwned"}'}],
    ["/api/send", {method: "POST", credentials: "include", headers: {"Content-Type": "application/json"}, body: '{"text":"pwned"}'}],
    ["/api/stop", {method: "POST", mode: "no-cors", credentials: "include", body: "{}"}],
    ["/api/events", {credentials: "include"}],
  ]) {
    try { const r = await fetch("` + target + `" + path, init); window.results.push(path + " " + r.type + " " + r.status); }
    catch (e) { window.results.push(path + " refused"); }
  }
  window.done = true;
};
run();
</script></body>`))
	}))
	defer evil.Close()
	ctx := browser(t, chromedp.Flag("host-resolver-rules", "MAP rebind.example 127.0.0.1"))
	// The owner's visit sets the token cookie for the server's site, and
	// starts a run that another origin will try to stop.
	do(t, ctx, chromedp.Navigate(s.guard.URL(hs.URL+"/")), chromedp.WaitVisible(chromedp.ID("input")))
	do(t, ctx, send("tea")...)
	do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`.tool-card.running[data-call-id="call_1_1"]`)))
	do(t, ctx, chromedp.Navigate(evil.URL+"/"))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`window.done === true`)); err != nil {
		t.Fatal(err)
	}
	results := eval[[]string](t, ctx, `window.results`)
	t.Logf("from another origin: %q", results)
	for _, r := range results {
		// no-cors answers are opaque (status 0) whatever the server said;
		// cors ones must fail; the server's own refusal is checked below.
		if strings.HasSuffix(r, " 200") || strings.HasSuffix(r, " 204") {
			t.Errorf("cross-origin request succeeded: %s", r)
		}
	}
	// A cross-site form post (text/plain, the kind any page can send).
	// Chromium shows a text/plain answer in a <pre>, which the form's page
	// does not have.
	do(t, ctx, chromedp.Navigate(evil.URL+"/"), chromedp.Evaluate[chromedp.Void](`document.getElementById("f").submit()`),
		chromedp.WaitVisible(chromedp.CSS("pre")))
	if body := eval[string](t, ctx, `document.body.innerText`); !strings.Contains(body, "cross-origin requests are refused") {
		t.Errorf("the form post was answered %q", body)
	}
	// DNS rebinding: the server's address under a foreign name.
	u, _ := url.Parse(s.guard.URL(hs.URL + "/"))
	u.Host = "rebind.example:" + u.Port()
	do(t, ctx, chromedp.Navigate(u.String()))
	if body := eval[string](t, ctx, `document.body.innerText`); !strings.Contains(body, "this server answers only to localhost") {
		t.Errorf("the page under a foreign host name: %q", body)
	}
	s.runs.Wait()
	msgs := s.agent.State().Messages
	for _, m := range msgs {
		if u, ok := m.(providers.UserMessage); ok && u.Text() != "tea" {
			t.Errorf("a request from another origin reached the agent: %q", u.Text())
		}
	}
	if last, ok := msgs[len(msgs)-1].(providers.AssistantMessage); !ok || last.StopReason != providers.StopReasonStop {
		t.Fatalf("the owner's run did not end normally: %+v", msgs[len(msgs)-1])
	}
}
