package providers

import (
	"net/http"
	"time"
)

// HTTPOptions are what every provider that talks to its server over HTTP
// shares: how it sends requests, what it will read and how long it waits,
// and how it retries before the first token. The zero value means the
// defaults (resolved by kit.HTTPDefaults, in package providers/kit). Each limit, when passed, ends the message with stop reason
// error and a message naming it. An error message that quotes the server
// is cut at 2 KiB and never carries the key (in any form), not
// even in part.
type HTTPOptions struct {
	// Client sends the requests; nil uses one whose connections time out
	// after ConnectTimeout. Its own Timeout, if any, bounds a whole stream;
	// the limits below apply either way.
	Client *http.Client

	// ConnectTimeout bounds dialing the server (with the default client);
	// 0 means 30s.
	ConnectTimeout time.Duration
	// HeaderTimeout bounds the wait for the response's headers after the
	// request was sent; 0 means 2 minutes.
	HeaderTimeout time.Duration
	// IdleTimeout bounds how long the provider waits on a stream for news,
	// or on an error body for bytes: comments and blank lines (a server's
	// keep-alives) are not news, and the time the provider's reader spends
	// between reads (a slow consumer) is not waiting. 0 means 5 minutes
	// (reasoning models may think that long before their first token).
	IdleTimeout time.Duration
	// MaxLineBytes bounds one line of an event stream; 0 means 4 MiB.
	MaxLineBytes int
	// MaxEventBytes bounds one event of an event stream: its lines
	// together, comments included, from one blank line to the next. 0
	// means 8 MiB (an event of one line of MaxLineBytes's default fits).
	MaxEventBytes int
	// MaxResponseBytes bounds one response's body; 0 means 64 MiB.
	MaxResponseBytes int64
	// MaxErrorBodyBytes bounds how much of an error response is read; 0
	// means 64 KiB.
	MaxErrorBodyBytes int64

	// MaxRetries is how many times a request refused with 429 or 5xx (or
	// whose connection failed on the way) before the first token is tried
	// again; 0 means 3, negative means never. What cannot succeed the next
	// time is never retried: another refusal, a refused connection, an
	// unknown host, an untrusted certificate. An error after retries says
	// how many attempts were made.
	MaxRetries int
	// RetryBaseDelay is the first backoff; 0 means 500ms. Each retry doubles
	// it, with jitter; a wait the server asks for (Retry-After and the
	// like) replaces it.
	RetryBaseDelay time.Duration
	// MaxRetryDelay caps one wait; a server asking for longer ends the
	// retries. 0 means 30s.
	MaxRetryDelay time.Duration
}
