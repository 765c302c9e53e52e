// Package httpx is what the HTTP providers share to read their servers
// safely: a transport that bounds every response in bytes and time, the
// retries before the first token (never of what cannot succeed), a bounded
// Server-Sent Events reader, base URLs checked before any request, and
// error texts that name the limit passed or the request refused (method,
// URL, attempts) and never carry the key.
//
// The transport wraps whatever sends the requests, the provider's own code
// or a vendor SDK's client, so the same limits hold under both.
package httpx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agentloop/agentloop/providers"
)

// Errors for the limits and timeouts of providers.HTTPOptions; each says
// which it was.
var (
	ErrCompressed    = errors.New("the server sent a compressed response, which is not accepted (the request asked for none)")
	ErrHeaderTimeout = errors.New("no response headers within HeaderTimeout")
	ErrIdleTimeout   = errors.New("the stream was silent for longer than IdleTimeout")
	// ErrRedirect is a redirect to another host, which the key (in a
	// header only the SDK knows) would follow.
	ErrRedirect = errors.New("the server redirected the request to another host, which the key is not sent to")
)

// LimitError is a response that passed one of the byte limits.
type LimitError struct {
	What  string // "an SSE line", "the response"
	Limit int64
	Name  string // the option
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s passed %d bytes (%s)", e.What, e.Limit, e.Name)
}

// Client returns an http.Client that sends through o.Client (or a default
// one) with o's limits: it asks for an uncompressed response and refuses a
// compressed one, follows no redirect to another host (unless o.Client has
// a CheckRedirect of its own), gives up on headers after HeaderTimeout, and bounds a
// successful body by MaxResponseBytes, MaxLineBytes (bytes between two
// newlines), MaxEventBytes (bytes between two blank lines) and IdleTimeout
// (time spent in reads waiting for more than comments and blank lines, a
// server's keep-alives), whatever reads it: an SDK's scanner may allow far
// more. An error body is bounded by MaxErrorBodyBytes and IdleTimeout. o
// must have its defaults.
func Client(o providers.HTTPOptions) *http.Client {
	base := o.Client
	if base == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DialContext = (&net.Dialer{Timeout: o.ConnectTimeout, KeepAlive: 30 * time.Second}).DialContext
		t.DisableCompression = true
		base = &http.Client{Transport: t}
	}
	c := *base
	if c.CheckRedirect == nil {
		c.CheckRedirect = sameHost
	}
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c.Transport = &transport{next: next, o: o}
	return &c
}

// sameHost follows a redirect on the request's own host only: net/http
// drops the Authorization header on the way to another, but not x-api-key
// or x-goog-api-key.
func sameHost(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if req.URL.Host != via[0].URL.Host {
		return ErrRedirect
	}
	return nil
}

type transport struct {
	next http.RoundTripper
	o    providers.HTTPOptions
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	req = req.Clone(ctx)
	req.Header.Set("Accept-Encoding", "identity")
	headers := time.AfterFunc(t.o.HeaderTimeout, func() { cancel(ErrHeaderTimeout) })
	resp, err := t.next.RoundTrip(req)
	headers.Stop()
	if err != nil {
		if c := context.Cause(ctx); errors.Is(c, ErrHeaderTimeout) {
			err = c
		}
		cancel(nil)
		return nil, err
	}
	if resp.StatusCode >= 300 {
		if w, _ := req.Context().Value(watchKey{}).(*watch); w != nil {
			w.refuse(req.Method, RedactURL(req.URL))
		}
		resp.Body = newErrorBody(resp.Body, cancel, ctx, t.o)
		return resp, nil
	}
	if enc := resp.Header.Get("Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
		resp.Body.Close()
		cancel(nil)
		return nil, ErrCompressed
	}
	w, _ := req.Context().Value(watchKey{}).(*watch)
	resp.Body = newBoundedBody(resp.Body, cancel, ctx, w, t.o)
	return resp, nil
}

// errorBody is an error response's body, cut at MaxErrorBodyBytes, and
// ended when a read waits longer than IdleTimeout.
type errorBody struct {
	r      io.Reader
	body   io.ReadCloser
	cancel context.CancelCauseFunc
	ctx    context.Context
	idle   time.Duration
	timer  *time.Timer
}

func newErrorBody(body io.ReadCloser, cancel context.CancelCauseFunc, ctx context.Context, o providers.HTTPOptions) *errorBody {
	b := &errorBody{r: io.LimitReader(body, o.MaxErrorBodyBytes), body: body, cancel: cancel, ctx: ctx, idle: o.IdleTimeout}
	b.timer = time.AfterFunc(b.idle, func() { cancel(ErrIdleTimeout) })
	return b
}

func (b *errorBody) Read(p []byte) (int, error) {
	b.timer.Reset(b.idle)
	n, err := b.r.Read(p)
	b.timer.Stop()
	if err != nil && !errors.Is(err, io.EOF) {
		if c := context.Cause(b.ctx); errors.Is(c, ErrIdleTimeout) {
			err = c
		}
	}
	return n, err
}

func (b *errorBody) Close() error {
	b.timer.Stop()
	b.cancel(nil)
	return b.body.Close()
}

// boundedBody is a stream's body with the limits: it fails past
// MaxResponseBytes, a line longer than MaxLineBytes or an event longer than
// MaxEventBytes, and ends the request when its reads have waited
// IdleTimeout in all for anything but comments and blank lines (the time
// its reader spends between reads does not count).
type boundedBody struct {
	body     io.ReadCloser
	cancel   context.CancelCauseFunc
	ctx      context.Context
	watch    *watch
	left     int64 // bytes still allowed
	limit    int64
	line     int  // bytes since the last newline
	lineHead byte // the first byte of the line, once it has one
	lineTail byte // its last so far
	crlf     bool // the last line ended with \r\n
	event    int  // bytes since the last blank line
	maxLine  int
	maxEvent int
	idle     time.Duration
	waited   time.Duration // in reads since the last news
	timer    *time.Timer
	err      error // the limit passed, returned from then on
	once     sync.Once
}

func newBoundedBody(body io.ReadCloser, cancel context.CancelCauseFunc, ctx context.Context, w *watch, o providers.HTTPOptions) *boundedBody {
	b := &boundedBody{body: body, cancel: cancel, ctx: ctx, watch: w, left: o.MaxResponseBytes, limit: o.MaxResponseBytes,
		maxLine: o.MaxLineBytes + 2, maxEvent: o.MaxEventBytes, idle: o.IdleTimeout} // a line's bound excludes its ending
	b.timer = time.AfterFunc(b.idle, func() { cancel(ErrIdleTimeout) })
	return b
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.left <= 0 {
		return 0, b.fail(&LimitError{What: "the response", Limit: b.limit, Name: "MaxResponseBytes"})
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	wait := b.idle - b.waited
	if wait <= 0 {
		b.cancel(ErrIdleTimeout)
		return 0, b.fail(ErrIdleTimeout)
	}
	began := time.Now()
	b.timer.Reset(wait)
	n, err := b.body.Read(p)
	b.timer.Stop() // the time between reads is the reader's, not the server's
	b.left -= int64(n)
	// A line or an event past its bound fails, and the reader gets only
	// the lines before it (a scanner would pass on what it was given).
	progress := false
	for start := 0; start < n; {
		i := bytes.IndexByte(p[start:n], '\n')
		ended := i >= 0
		if !ended {
			i = n - start
		}
		if i > 0 {
			if b.line == 0 {
				b.lineHead = p[start]
			}
			b.lineTail = p[start+i-1]
		}
		b.line += i
		if b.line > b.maxLine {
			return start, b.fail(&LimitError{What: "an SSE line", Limit: int64(b.maxLine - 2), Name: "MaxLineBytes"})
		}
		if b.event += i; b.event > b.maxEvent {
			return start, b.fail(&LimitError{What: "an SSE event", Limit: int64(b.maxEvent), Name: "MaxEventBytes"})
		}
		if b.line > 0 && b.lineHead != ':' && b.lineHead != '\r' {
			progress = true // more than a comment (a keep-alive) or a blank line
		}
		if ended {
			b.endLine()
		}
		start += i + 1
	}
	if progress {
		b.waited = 0
	} else {
		b.waited += time.Since(began)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		if c := context.Cause(b.ctx); errors.Is(c, ErrIdleTimeout) {
			err = b.fail(c)
		}
	}
	return n, err
}

// endLine counts a newline: a blank line ends the event, as every reader
// of the stream sees it (\n\n, or \r\n\r\n; a bare \r ends nothing).
func (b *boundedBody) endLine() {
	switch {
	case b.line == 0, b.line == 1 && b.lineHead == '\r' && b.crlf:
		b.event = 0
	default:
		b.event++ // the newline
	}
	b.crlf = b.line > 0 && b.lineTail == '\r'
	b.line = 0
}

// fail keeps err as the body's end and tells the request's watch.
func (b *boundedBody) fail(err error) error {
	b.err = err
	b.watch.set(err)
	return err
}

// Close releases the response and its timer.
func (b *boundedBody) Close() error {
	b.once.Do(func() {
		b.timer.Stop()
		b.cancel(nil)
	})
	return b.body.Close()
}

// watch keeps the first limit or timeout that ended a response of a
// request made with a context from Watch, and the last request refused.
type watch struct {
	mu          sync.Mutex
	err         error
	method, url string // the last request answered with a status >= 300
}

func (w *watch) refuse(method, url string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.method, w.url = method, url
}

// Refused returns the method and URL (RedactURL) of the last request made
// with ctx (from Watch) that the server answered with a status of 300 or
// more, for an HTTPError made from a vendor SDK's error, which may not
// say; empty when there was none.
func Refused(ctx context.Context) (method, url string) {
	w, _ := ctx.Value(watchKey{}).(*watch)
	if w == nil {
		return "", ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.method, w.url
}

type watchKey struct{}

// Watch returns a context whose requests through a Client note the limit
// or timeout that ends their response, for WatchedErr to report. A vendor
// SDK may hide the error a body's read returned (Gemini's turns it into a
// final chunk and reports that chunk as malformed); WatchedErr still names
// what happened.
func Watch(ctx context.Context) context.Context {
	return context.WithValue(ctx, watchKey{}, &watch{})
}

// WatchedErr returns the limit or timeout that ended a response of a
// request made with ctx (from Watch), or nil.
func WatchedErr(ctx context.Context) error {
	w, _ := ctx.Value(watchKey{}).(*watch)
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *watch) set(err error) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
}
