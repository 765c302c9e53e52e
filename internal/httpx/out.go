package httpx

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/kit"
)

// Out is the end of a provider's stream that its consumer reads: it passes
// the events on until the consumer stops reading, and ends the message
// when the stream fails. A provider's streamer embeds it.
type Out struct {
	Yield   func(providers.StreamEvent) bool
	Builder *kit.Builder
	Key     string // removed from every error message the provider writes
	stopped bool
}

// Emit passes an event on; it reports false once the consumer stopped.
// An error event's message goes out Quote'd: without the key, and cut at
// MaxQuotedBytes, whoever wrote it.
func (o *Out) Emit(e providers.StreamEvent) bool {
	if o.stopped {
		return false
	}
	if e.Type == providers.StreamError && e.Message != nil {
		e.Message.ErrorMessage = Quote(e.Message.ErrorMessage, o.Key)
	}
	if !o.Yield(e) {
		o.stopped = true
	}
	return !o.stopped
}

// Stopped reports whether the consumer stopped reading.
func (o *Out) Stopped() bool { return o.stopped }

// Fail ends the message after err: as aborted when ctx is done, else as
// an error saying what went wrong (Describe), what arrived kept. When ctx
// is from Watch and a limit or timeout ended a response, that is what went
// wrong, whatever err the SDK made of it; an HTTP refusal that names no
// request gets the one ctx saw refused (Refused).
func (o *Out) Fail(ctx context.Context, err error, usage providers.Usage) {
	if ctx.Err() != nil {
		o.Emit(o.Builder.Fail(providers.StopReasonAborted, providers.AbortedMessage, usage))
		return
	}
	if w := WatchedErr(ctx); w != nil {
		err = w
	}
	var he *HTTPError
	if errors.As(err, &he) && he.URL == "" {
		he.Method, he.URL = Refused(ctx) // an SDK's refusal, which names no URL
	}
	o.Emit(o.Builder.Fail(providers.StopReasonError, Describe(err, o.Key), usage))
}

// Recover, deferred, turns a panic of the provider or its SDK into a failed
// message naming the provider, so that no panic escapes the sequence.
func (o *Out) Recover(provider string, usage func() providers.Usage) {
	if r := recover(); r != nil && !o.stopped {
		o.Emit(o.Builder.Fail(providers.StopReasonError, fmt.Sprintf("%s provider: panic: %v", provider, r), usage()))
	}
}
