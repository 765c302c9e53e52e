package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// httpError is a response the server refused the request with.
type httpError struct {
	status     int
	message    string // the server's message, or the start of its body
	retryAfter string // the Retry-After header
}

func (e *httpError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.status, e.message) }

// Errors for the limits and timeouts of Options; describe names them.
var (
	errCompressed    = errors.New("the server sent a compressed response, which is not accepted (the request asked for none)")
	errHeaderTimeout = errors.New("no response headers within HeaderTimeout")
	errIdleTimeout   = errors.New("the stream was silent for longer than IdleTimeout")
)

// limitError is a response that passed one of the byte limits.
type limitError struct {
	what  string // "an SSE line", "the response"
	limit int64
	name  string // the option
}

func (e *limitError) Error() string {
	return fmt.Sprintf("%s passed %d bytes (%s)", e.what, e.limit, e.name)
}

// open sends the request, retrying rate limits, server errors and failed
// connections before the first byte of a stream, and returns the stream's
// body, bounded by the provider's limits. cancel ends the request.
func (s *streamer) open(ctx context.Context, body []byte) (*boundedBody, error) {
	o := s.p.opts
	for attempt := 0; ; attempt++ {
		bb, err := s.send(ctx, body)
		if err == nil {
			return bb, nil
		}
		if ctx.Err() != nil || o.MaxRetries < 0 || attempt >= o.MaxRetries || !retryable(err) {
			return nil, err
		}
		wait := o.RetryBaseDelay << attempt
		wait = wait/2 + rand.N(wait/2+1) // jitter: [wait/2, wait]
		var he *httpError
		if errors.As(err, &he) {
			if ra, ok := parseRetryAfter(he.retryAfter, time.Now()); ok {
				wait = ra
			}
		}
		if wait > o.MaxRetryDelay {
			return nil, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// send makes one attempt.
func (s *streamer) send(ctx context.Context, body []byte) (*boundedBody, error) {
	o := s.p.opts
	rctx, cancel := context.WithCancelCause(ctx)
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, o.BaseURL+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		cancel(nil)
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Accept-Encoding", "identity")
	if s.key != "" {
		req.Header.Set("Authorization", "Bearer "+s.key)
	}
	for k, v := range o.Headers {
		req.Header.Set(k, v)
	}
	headers := time.AfterFunc(o.HeaderTimeout, func() { cancel(errHeaderTimeout) })
	resp, err := s.p.client.Do(req)
	headers.Stop()
	if err != nil {
		if c := context.Cause(rctx); errors.Is(c, errHeaderTimeout) {
			err = c
		}
		cancel(nil)
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer cancel(nil)
		defer resp.Body.Close()
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, o.MaxErrorBodyBytes))
		return nil, &httpError{status: resp.StatusCode, message: errorMessage(raw), retryAfter: resp.Header.Get("Retry-After")}
	}
	if enc := resp.Header.Get("Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
		resp.Body.Close()
		cancel(nil)
		return nil, errCompressed
	}
	return newBoundedBody(resp.Body, cancel, rctx, o), nil
}

// errorMessage reads the message of an error body: the "error" object's
// message when the body is JSON of the usual shape, the body otherwise.
func errorMessage(raw []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &e) == nil && len(e.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(e.Error, &obj) == nil && obj.Message != "" {
			return obj.Message
		}
		var str string
		if json.Unmarshal(e.Error, &str) == nil && str != "" {
			return str
		}
	}
	return strings.TrimSpace(string(raw))
}

// retryable reports whether a failed attempt may be tried again: rate
// limits, server errors and connection failures, not cancellation, not a
// refusal, not a broken limit.
func retryable(err error) bool {
	var he *httpError
	if errors.As(err, &he) {
		return he.status == http.StatusTooManyRequests || he.status >= 500
	}
	var le *limitError
	return !errors.As(err, &le) && !errors.Is(err, errCompressed) &&
		!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// parseRetryAfter reads a Retry-After header: seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
		return time.Duration(secs * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
