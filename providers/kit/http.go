package kit

import (
	"time"

	"github.com/agentloop/agentloop/providers"
)

// HTTPDefaults returns o with every zero (or negative, for the limits and
// timeouts) setting replaced by its documented default. A provider calls it
// once, when it is made, so that a user's forgotten field never means
// "unlimited". A negative MaxRetries (never retry) is kept.
func HTTPDefaults(o providers.HTTPOptions) providers.HTTPOptions {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.ConnectTimeout, 30*time.Second)
	def(&o.HeaderTimeout, 2*time.Minute)
	def(&o.IdleTimeout, 5*time.Minute)
	def(&o.RetryBaseDelay, 500*time.Millisecond)
	def(&o.MaxRetryDelay, 30*time.Second)
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = 4 << 20
	}
	if o.MaxEventBytes <= 0 {
		o.MaxEventBytes = 8 << 20
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = 64 << 20
	}
	if o.MaxErrorBodyBytes <= 0 {
		o.MaxErrorBodyBytes = 64 << 10
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = 3
	}
	return o
}
