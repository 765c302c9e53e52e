package httpx

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
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
	// Method and URL are the request refused, when known: the URL as
	// RedactURL shows it, so that a wrong path (a missing /v1) is seen.
	Method, URL string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("HTTP %d: %s%s", e.Status, strings.TrimSpace(e.Message), where(e.Method, e.URL, 0))
}

// AttemptsError is the last error of a request that was tried more than
// once (Retry): it says how many times.
type AttemptsError struct {
	Attempts int
	Err      error
}

func (e *AttemptsError) Error() string {
	return fmt.Sprintf("%v (%d attempts)", e.Err, e.Attempts)
}

func (e *AttemptsError) Unwrap() error { return e.Err }

// where is what an error message adds to say which request failed and
// how often it was tried: " (POST https://host/v1/chat/completions; 4
// attempts)"; empty when nothing is known.
func where(method, url string, attempts int) string {
	var parts []string
	if url != "" {
		parts = append(parts, strings.TrimSpace(method+" "+url))
	}
	if attempts > 1 {
		parts = append(parts, strconv.Itoa(attempts)+" attempts")
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// Retry calls attempt until it succeeds, fails in a way not worth
// retrying, or o's retries are spent, waiting between attempts with
// exponential backoff and jitter, or as long as the server asked (an
// HTTPError's RetryAfter). It gives up at once when ctx ends and when the
// server asks for a wait longer than MaxRetryDelay, and after a limit
// (noted by Watch, when ctx has one). An error after more than one
// attempt is an AttemptsError saying how many were made. o must have its
// defaults.
func Retry[T any](ctx context.Context, o providers.HTTPOptions, attempt func() (T, error)) (T, error) {
	for n := 0; ; n++ {
		v, err := attempt()
		if err == nil {
			return v, nil
		}
		if w := WatchedErr(ctx); w != nil {
			return v, w // a limit the SDK's error may hide: final
		}
		if ctx.Err() != nil {
			return v, err
		}
		if o.MaxRetries < 0 || n >= o.MaxRetries || !Retryable(err) {
			return v, attempts(err, n+1)
		}
		wait := o.RetryBaseDelay << n
		wait = wait/2 + rand.N(wait/2+1) // jitter: [wait/2, wait]
		var he *HTTPError
		if errors.As(err, &he) && he.RetryAfter > 0 {
			wait = he.RetryAfter
		}
		if wait > o.MaxRetryDelay {
			return v, attempts(err, n+1)
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

// attempts wraps the last error of a request tried n times.
func attempts(err error, n int) error {
	if n < 2 {
		return err
	}
	return &AttemptsError{Attempts: n, Err: err}
}

// Retryable reports whether a failed attempt may be tried again: rate
// limits, server errors and connections that failed on the way (reset,
// timed out, cut), never what cannot succeed the next time: cancellation,
// a refusal, a broken limit, a URL that does not parse or has no usable
// scheme, a host that does not exist, a port nothing listens on
// (connection refused), a certificate the client does not trust, or a
// server that does not speak TLS.
func Retryable(err error) bool {
	var he *HTTPError
	if errors.As(err, &he) {
		return he.Status == http.StatusTooManyRequests || he.Status >= 500
	}
	var le *LimitError
	if errors.As(err, &le) || errors.Is(err, ErrCompressed) || errors.Is(err, ErrRedirect) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	return !permanent(err)
}

// permanent reports whether a request failed in a way that trying again
// cannot mend.
func permanent(err error) bool {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Op == "parse" {
		return true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) && dns.IsNotFound {
		return true
	}
	var cert *tls.CertificateVerificationError
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	var record tls.RecordHeaderError
	if errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &cert) || errors.As(err, &unknown) ||
		errors.As(err, &host) || errors.As(err, &invalid) || errors.As(err, &record) {
		return true
	}
	return strings.Contains(err.Error(), "unsupported protocol scheme")
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
//
// An HTTP refusal, and a request that failed on its way, end with the
// method and URL (RedactURL) and, when it was tried more than once, how
// many times: "HTTP 404: 404 page not found (POST
// http://localhost:8080/chat/completions)", "stream failed: dial tcp
// 127.0.0.1:8080: connect: connection refused (POST
// http://localhost:8080/v1/chat/completions)", "HTTP 503: overloaded (POST
// https://api.example.com/v1/messages; 4 attempts)". The server's part is
// cut so that this ending always fits.
func Describe(err error, key string) string {
	n := 0
	var ae *AttemptsError
	if errors.As(err, &ae) {
		n = ae.Attempts
	}
	var he *HTTPError
	if errors.As(err, &he) {
		msg := strings.TrimSpace(he.Message)
		if msg == "" {
			msg = http.StatusText(he.Status)
		}
		return quoteWhere(fmt.Sprintf("HTTP %d: %s", he.Status, msg), where(he.Method, he.URL, n), key)
	}
	var le *LimitError
	var se *ServerError
	switch {
	case errors.As(err, &le), errors.As(err, &se), errors.Is(err, ErrIdleTimeout), errors.Is(err, ErrHeaderTimeout),
		errors.Is(err, ErrCompressed), errors.Is(err, ErrIncomplete), errors.Is(err, ErrMalformed):
		return quoteWhere(unwrapAttempts(err).Error(), where("", "", n), key)
	case errors.Is(err, ErrRedirect):
		return ErrRedirect.Error()
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Op != "parse" {
		return quoteWhere("stream failed: "+ue.Err.Error(), where(strings.ToUpper(ue.Op), redactURLString(ue.URL), n), key)
	}
	return quoteWhere("stream failed: "+unwrapAttempts(err).Error(), where("", "", n), key)
}

// unwrapAttempts is the error an AttemptsError carries, whose count the
// message says its own way.
func unwrapAttempts(err error) error {
	if ae, ok := err.(*AttemptsError); ok {
		return ae.Err
	}
	return err
}

// maxWhereBytes bounds the ending Describe adds (a long URL is cut).
const maxWhereBytes = MaxQuotedBytes / 4

// quoteWhere is Quote of text followed by the ending w, the text cut so
// that w fits within MaxQuotedBytes (as Out.Emit cuts it again).
func quoteWhere(text, w, key string) string {
	if w == "" {
		return Quote(text, key)
	}
	w = quote(w, key, maxWhereBytes)
	return quote(text, key, MaxQuotedBytes-len(w)) + w
}
