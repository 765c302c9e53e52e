package httpx

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/agentloop/agentloop/providers"
)

// HTTPError is a response the server refused the request with.
type HTTPError struct {
	Status  int
	Message string // the server's message, or the start of its body
	// RetryAfter is the wait the server asked for (Retry-After,
	// retry-after-ms, or a retry delay in its error), or 0.
	RetryAfter time.Duration
}

func (e *HTTPError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.Status, e.Message) }

// Retry calls attempt until it succeeds, fails in a way not worth
// retrying, or o's retries are spent, waiting between attempts with
// exponential backoff and jitter, or as long as the server asked (an
// HTTPError's RetryAfter). It gives up at once when ctx ends and when the
// server asks for a wait longer than MaxRetryDelay, and after a limit
// (noted by Watch, when ctx has one). o must have its defaults.
func Retry[T any](ctx context.Context, o providers.HTTPOptions, attempt func() (T, error)) (T, error) {
	for n := 0; ; n++ {
		v, err := attempt()
		if err == nil {
			return v, nil
		}
		if w := WatchedErr(ctx); w != nil {
			return v, w // a limit the SDK's error may hide: final
		}
		if ctx.Err() != nil || o.MaxRetries < 0 || n >= o.MaxRetries || !Retryable(err) {
			return v, err
		}
		wait := o.RetryBaseDelay << n
		wait = wait/2 + rand.N(wait/2+1) // jitter: [wait/2, wait]
		var he *HTTPError
		if errors.As(err, &he) && he.RetryAfter > 0 {
			wait = he.RetryAfter
		}
		if wait > o.MaxRetryDelay {
			return v, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return v, ctx.Err()
		case <-t.C:
		}
	}
}

// Retryable reports whether a failed attempt may be tried again: rate
// limits, server errors and connection failures, not cancellation, not a
// refusal, not a broken limit.
func Retryable(err error) bool {
	var he *HTTPError
	if errors.As(err, &he) {
		return he.Status == http.StatusTooManyRequests || he.Status >= 500
	}
	var le *LimitError
	return !errors.As(err, &le) && !errors.Is(err, ErrCompressed) && !errors.Is(err, ErrRedirect) &&
		!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// RetryAfter reads the wait a response asks for: retry-after-ms (OpenAI,
// Anthropic), then Retry-After in seconds or as an HTTP date.
func RetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms >= 0 {
		return time.Duration(ms * float64(time.Millisecond)), true
	}
	v := h.Get("Retry-After")
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

// Errors of a stream's content, common to the providers.
var (
	ErrIncomplete = errors.New("the stream ended before the response was complete")
	ErrMalformed  = errors.New("malformed stream chunk")
)

// ServerError is an error the server reported inside a stream (an error
// event, a failed response).
type ServerError struct{ Message string }

func (e *ServerError) Error() string { return "provider error: " + e.Message }

// Describe says what went wrong in words the model and the user can use,
// Quote'd (without the key, cut at MaxQuotedBytes): an HTTP refusal with
// the server's message, a limit or timeout by name, the server's own
// error, and anything else as a failed stream.
func Describe(err error, key string) string {
	var he *HTTPError
	if errors.As(err, &he) {
		msg := he.Message
		if msg == "" {
			msg = http.StatusText(he.Status)
		}
		return Quote(fmt.Sprintf("HTTP %d: %s", he.Status, msg), key)
	}
	var le *LimitError
	var se *ServerError
	switch {
	case errors.As(err, &le), errors.As(err, &se), errors.Is(err, ErrIdleTimeout), errors.Is(err, ErrHeaderTimeout),
		errors.Is(err, ErrCompressed), errors.Is(err, ErrIncomplete), errors.Is(err, ErrMalformed):
		return Quote(err.Error(), key)
	case errors.Is(err, ErrRedirect):
		return ErrRedirect.Error()
	}
	return Quote("stream failed: "+err.Error(), key)
}
