package httpx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/kit"
)

// TestTransportLimits: each limit of the transport, passed by a server, is
// reported as itself, whatever reads the body.
func TestTransportLimits(t *testing.T) {
	tests := []struct {
		name  string
		serve func(w http.ResponseWriter, r *http.Request)
		want  error
	}{
		{"a long line inside one read", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, "data: ok\n"+strings.Repeat("x", 3000)+"\ndata: ok\n")
		}, &LimitError{Name: "MaxLineBytes"}},
		{"a long line over several reads", func(w http.ResponseWriter, r *http.Request) {
			for range 10 {
				fmt.Fprint(w, strings.Repeat("y", 500))
				w.(http.Flusher).Flush()
			}
		}, &LimitError{Name: "MaxLineBytes"}},
		{"a long response", func(w http.ResponseWriter, r *http.Request) {
			for range 100 {
				fmt.Fprint(w, "data: "+strings.Repeat("z", 100)+"\n\n")
			}
		}, &LimitError{Name: "MaxResponseBytes"}},
		{"an event of short data lines", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, "data: ok\n\n"+strings.Repeat("data: "+strings.Repeat("d", 50)+"\n", 60)+"\n")
		}, &LimitError{Name: "MaxEventBytes"}},
		{"comments without a blank line", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, strings.Repeat(": ping\n", 400))
		}, &LimitError{Name: "MaxEventBytes"}},
		{"\\n\\r\\n ends no event for every reader", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, strings.Repeat("data: "+strings.Repeat("m", 50)+"\n\r\n", 60))
		}, &LimitError{Name: "MaxEventBytes"}},
		{"bare \\r ends no line", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, strings.Repeat("data: "+strings.Repeat("c", 50)+"\r\r", 60))
		}, &LimitError{Name: "MaxLineBytes"}},
		{"keep-alives without end", func(w http.ResponseWriter, r *http.Request) {
			for r.Context().Err() == nil {
				if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil {
					return
				}
			}
		}, &LimitError{Name: "MaxResponseBytes"}},
		{"slow keep-alives", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, "data: ok\n\n")
			tick := time.NewTicker(10 * time.Millisecond) // ten times as often as IdleTimeout
			defer tick.Stop()
			for {
				if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-tick.C:
				}
			}
		}, ErrIdleTimeout},
		{"a silent error body", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"error":`)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}, ErrIdleTimeout},
		{"a compressed response", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			fmt.Fprint(w, "...")
		}, ErrCompressed},
		{"a silent stream", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, "data: ok\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}, ErrIdleTimeout},
		{"no headers", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, ErrHeaderTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { tt.serve(w, r) }))
			defer srv.Close()
			o := kit.HTTPDefaults(providers.HTTPOptions{MaxLineBytes: 1000, MaxEventBytes: 2000, MaxResponseBytes: 5000, IdleTimeout: 100 * time.Millisecond, HeaderTimeout: 100 * time.Millisecond})
			// Only a limit may end these streams; the deadline ends the
			// test if none does.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
			resp, err := Client(o).Do(req)
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			var le, want *LimitError
			switch {
			case errors.As(tt.want, &want):
				if !errors.As(err, &le) || le.Name != want.Name {
					t.Fatalf("got %v, want a %s error", err, want.Name)
				}
			case !errors.Is(err, tt.want):
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}
}

// TestErrorBodyIsCut: an error response's body is read up to
// MaxErrorBodyBytes, however long it is.
func TestErrorBodyIsCut(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, strings.Repeat("e", 100000))
	}))
	defer srv.Close()
	resp, err := Client(kit.HTTPDefaults(providers.HTTPOptions{MaxErrorBodyBytes: 1000})).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if raw, _ := io.ReadAll(resp.Body); len(raw) != 1000 {
		t.Fatalf("read %d bytes of the error body", len(raw))
	}
}

// TestRetry: rate limits and server errors are retried, waiting as long as
// the server asks; refusals, limits and cancellation are not; a wait past
// MaxRetryDelay ends the retries.
func TestRetry(t *testing.T) {
	o := kit.HTTPDefaults(providers.HTTPOptions{RetryBaseDelay: time.Millisecond, MaxRetries: 2, MaxRetryDelay: time.Second})
	tests := []struct {
		name  string
		errs  []error
		calls int
		ok    bool
	}{
		{"succeeds after a 429 and a 503", []error{&HTTPError{Status: 429}, &HTTPError{Status: 503}}, 3, true},
		{"gives up after MaxRetries", []error{&HTTPError{Status: 500}, &HTTPError{Status: 500}, &HTTPError{Status: 500}}, 3, false},
		{"a refusal is final", []error{&HTTPError{Status: 400}}, 1, false},
		{"a limit is final", []error{&LimitError{Name: "MaxLineBytes"}}, 1, false},
		{"a wait past MaxRetryDelay ends it", []error{&HTTPError{Status: 429, RetryAfter: time.Hour}}, 1, false},
		{"a short Retry-After is honoured", []error{&HTTPError{Status: 429, RetryAfter: 5 * time.Millisecond}}, 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			_, err := Retry(context.Background(), o, func() (int, error) {
				calls++
				if calls <= len(tt.errs) {
					return 0, tt.errs[calls-1]
				}
				return 1, nil
			})
			if calls != tt.calls || (err == nil) != tt.ok {
				t.Fatalf("%d calls, error %v", calls, err)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		h    http.Header
		want time.Duration
		ok   bool
	}{
		{http.Header{"Retry-After": {"2"}}, 2 * time.Second, true},
		{http.Header{"Retry-After-Ms": {"150"}, "Retry-After": {"9"}}, 150 * time.Millisecond, true},
		{http.Header{"Retry-After": {now.Add(3 * time.Second).Format(http.TimeFormat)}}, 3 * time.Second, true},
		{http.Header{"Retry-After": {"soon"}}, 0, false},
		{http.Header{}, 0, false},
	} {
		if got, ok := RetryAfter(tt.h, now); got != tt.want || ok != tt.ok {
			t.Errorf("%v: %v %v, want %v %v", tt.h, got, ok, tt.want, tt.ok)
		}
	}
}

// TestDescribeNeverCarriesTheKey: the key is removed before a server's
// message is cut, wherever it stands, and the message is cut at
// MaxQuotedBytes with a marker.
func TestDescribeNeverCarriesTheKey(t *testing.T) {
	key := "sk-ant-" + strings.Repeat("k", 50)
	for _, around := range []int{MaxQuotedBytes, 4 * MaxQuotedBytes} {
		for pad := around - 80; pad < around+20; pad++ {
			raw := strings.Repeat("a", pad) + key + " is invalid"
			msg := Describe(&HTTPError{Status: 401, Message: raw}, key)
			cut := len("HTTP 401: "+raw) > MaxQuotedBytes
			if len(msg) > MaxQuotedBytes || !strings.HasPrefix(msg, "HTTP 401: aaa") || strings.Contains(msg, " [... cut from ") != cut {
				t.Fatalf("pad %d: %d bytes: %q", pad, len(msg), msg[max(0, len(msg)-100):])
			}
			for i := 0; i+8 <= len(key); i++ {
				if strings.Contains(msg, key[i:i+8]) {
					t.Fatalf("pad %d: %q carries part of the key", pad, msg)
				}
			}
		}
	}
	if got := Describe(&ServerError{Message: "overloaded " + key}, key); got != "provider error: overloaded [redacted]" {
		t.Fatalf("server error: %q", got)
	}
}

// TestOutRecover: a panic in a provider's stream ends the message as an
// error naming the provider, without the key; any error message goes out
// Quote'd; nothing goes out once the consumer stopped.
func TestOutRecover(t *testing.T) {
	var got []providers.StreamEvent
	o := &Out{Yield: func(e providers.StreamEvent) bool { got = append(got, e); return true }, Builder: kit.NewBuilder(providers.Model{}), Key: "sk-secret-key"}
	func() {
		defer o.Recover("test", func() providers.Usage { return providers.Usage{} })
		panic("broken with sk-secret-key")
	}()
	if len(got) != 1 || got[0].Type != providers.StreamError || got[0].Message.ErrorMessage != "test provider: panic: broken with [redacted]" {
		t.Fatalf("events %+v", got)
	}
	// Whoever wrote an error message, it goes out without the key and cut.
	got = nil
	o.Emit(o.Builder.Fail(providers.StopReasonError, "the response is incomplete: "+strings.Repeat("x", 1<<20)+" sk-secret-key", providers.Usage{}))
	if m := got[0].Message.ErrorMessage; len(m) > MaxQuotedBytes || !strings.HasSuffix(m, " [... cut from 1048618 bytes]") {
		t.Fatalf("%d bytes: %q", len(m), m[len(m)-40:])
	}
	got = nil
	o.Emit(o.Builder.Fail(providers.StopReasonError, `blocked: \u0073k-secret-key`, providers.Usage{}))
	if m := got[0].Message.ErrorMessage; m != "blocked: [redacted]" {
		t.Fatalf("%q", m)
	}
	stopped := &Out{Yield: func(providers.StreamEvent) bool { return false }, Builder: kit.NewBuilder(providers.Model{})}
	if stopped.Emit(providers.StreamEvent{}) || !stopped.Stopped() || stopped.Emit(providers.StreamEvent{}) {
		t.Fatal("Emit after the consumer stopped")
	}
}

// TestSSEReaderBoundsAnEvent: an event's lines together may not pass
// maxEvent, comments included; events within it are read whole.
func TestSSEReaderBoundsAnEvent(t *testing.T) {
	tests := []struct {
		name, stream string
		events       int
		err          bool
	}{
		{"events within the bound", strings.Repeat("data: "+strings.Repeat("a", 40)+"\ndata: b\n\n", 10), 10, false},
		{"an event of many lines", "data: ok\n\n" + strings.Repeat("data: "+strings.Repeat("a", 40)+"\n", 10), 1, true},
		{"comments without end", "data: ok\n\n" + strings.Repeat(": ping\n", 100), 1, true},
		{"keep-alives between events", strings.Repeat(": ping\n\n", 100) + "data: ok\n\n", 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewSSEReader(strings.NewReader(tt.stream), 100, 200)
			n := 0
			var err error
			for {
				if _, err = r.Next(); err != nil {
					break
				}
				n++
			}
			var le *LimitError
			if n != tt.events || errors.As(err, &le) != tt.err || (tt.err && le.Name != "MaxEventBytes") {
				t.Fatalf("%d events, then %v", n, err)
			}
		})
	}
}

// TestWatchNamesAHiddenLimit: a reader that turns the body's error into
// something else (as Gemini's SDK does) still leaves the limit for
// WatchedErr, and Out.Fail names it.
func TestWatchNamesAHiddenLimit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "data: "+strings.Repeat("x", 5000))
	}))
	defer srv.Close()
	ctx := Watch(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := Client(kit.HTTPDefaults(providers.HTTPOptions{MaxLineBytes: 1000})).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	var le *LimitError
	if !errors.As(WatchedErr(ctx), &le) || le.Name != "MaxLineBytes" || WatchedErr(context.Background()) != nil {
		t.Fatalf("watched %v", WatchedErr(ctx))
	}
	var got []providers.StreamEvent
	o := &Out{Yield: func(e providers.StreamEvent) bool { got = append(got, e); return true }, Builder: kit.NewBuilder(providers.Model{})}
	o.Fail(ctx, errors.New("invalid stream chunk: data: xxxx"), providers.Usage{})
	if len(got) != 1 || got[0].Message.ErrorMessage != "an SSE line passed 1000 bytes (MaxLineBytes)" {
		t.Fatalf("events %+v", got)
	}
	calls := 0
	if _, err := Retry(ctx, kit.HTTPDefaults(providers.HTTPOptions{MaxRetries: 3}), func() (int, error) {
		calls++
		return 0, errors.New("something the SDK made of it")
	}); calls != 1 || !errors.As(err, &le) {
		t.Fatalf("%d attempts after a limit, %v", calls, err)
	}
}

// TestIdleTimeoutCountsOnlyWaiting: a reader that takes longer than
// IdleTimeout between two reads does not make the stream time out; the
// server's silence does.
func TestIdleTimeoutCountsOnlyWaiting(t *testing.T) {
	more := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		<-more
		fmt.Fprint(w, "data: two\n\n")
	}))
	defer srv.Close()
	resp, err := Client(kit.HTTPDefaults(providers.HTTPOptions{IdleTimeout: 100 * time.Millisecond})).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := NewSSEReader(resp.Body, 100, 100)
	if _, err := events.Next(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // a slow consumer (the subject of the test, not a synchronisation)
	close(more)
	if ev, err := events.Next(); err != nil || string(ev.Data) != "two" {
		t.Fatalf("after a slow consumer: %q, %v", ev.Data, err)
	}
}

// TestNoRedirectToAnotherHost: a redirect to another host is refused (the
// key in x-api-key would follow it); one on the same host is followed.
func TestNoRedirectToAnotherHost(t *testing.T) {
	var foreignCalls atomic.Int32
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { foreignCalls.Add(1) }))
	defer foreign.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/here" {
			fmt.Fprint(w, "data: ok\n\n")
			return
		}
		target := foreign.URL
		if r.URL.Path == "/same" {
			target = "/here"
		}
		http.Redirect(w, r, target, http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	c := Client(kit.HTTPDefaults(providers.HTTPOptions{}))
	send := func(path string) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader("{}"))
		req.Header.Set("X-Api-Key", "sk-secret")
		return c.Do(req)
	}
	if _, err := send("/away"); !errors.Is(err, ErrRedirect) || foreignCalls.Load() != 0 || Describe(err, "") != ErrRedirect.Error() || Retryable(err) {
		t.Fatalf("redirect away: %v, %d calls", err, foreignCalls.Load())
	}
	resp, err := send("/same")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if raw, _ := io.ReadAll(resp.Body); string(raw) != "data: ok\n\n" {
		t.Fatalf("same host: %q", raw)
	}
}
