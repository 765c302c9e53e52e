// Package httpx is what the HTTP providers share to read their servers
// safely: a transport that bounds every response in bytes and time, the
// retries before the first token, a bounded Server-Sent Events reader, and
// error texts that name the limit passed and never carry the key.
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
// compressed one, gives up on headers after HeaderTimeout, and bounds a
// successful body by MaxResponseBytes, MaxLineBytes (bytes between two
// newlines, whatever reads the lines: an SDK's scanner may allow far more)
// and IdleTimeout, and an error body by MaxErrorBodyBytes. o must have its
// defaults.
func Client(o providers.HTTPOptions) *http.Client {
	base := o.Client
	if base == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DialContext = (&net.Dialer{Timeout: o.ConnectTimeout, KeepAlive: 30 * time.Second}).DialContext
		t.DisableCompression = true
		base = &http.Client{Transport: t}
	}
	c := *base
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c.Transport = &transport{next: next, o: o}
	return &c
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
		resp.Body = &errorBody{Reader: io.LimitReader(resp.Body, t.o.MaxErrorBodyBytes), body: resp.Body, cancel: cancel}
		return resp, nil
	}
	if enc := resp.Header.Get("Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
		resp.Body.Close()
		cancel(nil)
		return nil, ErrCompressed
	}
	resp.Body = newBoundedBody(resp.Body, cancel, ctx, t.o)
	return resp, nil
}

// errorBody is an error response's body, cut at MaxErrorBodyBytes.
type errorBody struct {
	io.Reader
	body   io.ReadCloser
	cancel context.CancelCauseFunc
}

func (b *errorBody) Close() error {
	b.cancel(nil)
	return b.body.Close()
}

// boundedBody is a stream's body with the limits: it fails past
// MaxResponseBytes or a line longer than MaxLineBytes, and ends the request
// when a read waits longer than IdleTimeout.
type boundedBody struct {
	body    io.ReadCloser
	cancel  context.CancelCauseFunc
	ctx     context.Context
	left    int64 // bytes still allowed
	limit   int64
	line    int // bytes since the last newline
	maxLine int
	idle    time.Duration
	timer   *time.Timer
	once    sync.Once
}

func newBoundedBody(body io.ReadCloser, cancel context.CancelCauseFunc, ctx context.Context, o providers.HTTPOptions) *boundedBody {
	b := &boundedBody{body: body, cancel: cancel, ctx: ctx, left: o.MaxResponseBytes, limit: o.MaxResponseBytes,
		maxLine: o.MaxLineBytes + 2, idle: o.IdleTimeout} // a line's bound excludes its ending
	b.timer = time.AfterFunc(b.idle, func() { cancel(ErrIdleTimeout) })
	return b
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, &LimitError{What: "the response", Limit: b.limit, Name: "MaxResponseBytes"}
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	b.timer.Reset(b.idle)
	n, err := b.body.Read(p)
	b.left -= int64(n)
	// A line past the bound fails, and the reader gets only the lines
	// before it (a scanner would pass on what it was given).
	for start := 0; start < n; {
		i := bytes.IndexByte(p[start:n], '\n')
		if i < 0 {
			i = n - start
		}
		if b.line += i; b.line > b.maxLine {
			return start, &LimitError{What: "an SSE line", Limit: int64(b.maxLine - 2), Name: "MaxLineBytes"}
		}
		if start+i < n { // the line ended
			b.line = 0
		}
		start += i + 1
	}
	if err != nil && !errors.Is(err, io.EOF) {
		if c := context.Cause(b.ctx); errors.Is(c, ErrIdleTimeout) {
			err = c
		}
	}
	return n, err
}

// Close releases the response and its timer.
func (b *boundedBody) Close() error {
	b.once.Do(func() {
		b.timer.Stop()
		b.cancel(nil)
	})
	return b.body.Close()
}
