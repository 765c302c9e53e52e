package mcp

import "time"

// Limits bound what a Toolset takes from its servers. A zero (or
// negative) field means the default named beside it, never "unlimited".
// Past a bound on a listing, the Toolset keeps what came first in the
// server's order and says in Refused what it left out and why.
type Limits struct {
	// MaxPages bounds the tools/list pages read in one listing of a
	// server; 0 means DefaultMaxPages.
	MaxPages int
	// MaxTools bounds the tools kept per server; 0 means DefaultMaxTools.
	MaxTools int
	// MaxToolBytes bounds one tool's definition: its name, input schema
	// (as JSON), description and title together. A tool past it is left out.
	// 0 means DefaultMaxToolBytes. (A definition nesting objects and arrays
	// more than 512 levels deep is left out too, over HTTP and stdio:
	// "mcp: the definition of NAME nests more than 512 levels deep". The
	// SDK decodes no message nested past 1000 levels, and one such tool
	// would fail the whole page.)
	MaxToolBytes int
	// MaxMessageBytes bounds one message from a server (a result, a page
	// of tools), over every transport. A result past it is an error the
	// model reads (the call ran; its result was dropped); a page of tools
	// past it ends the listing there. 0 means DefaultMaxMessageBytes.
	MaxMessageBytes int
	// ListTimeout bounds connecting to a server and listing its tools, at
	// Connect (within its context) and on every relisting; 0 means
	// DefaultListTimeout.
	ListTimeout time.Duration
	// MaxStderrBytes bounds the standard error kept per stdio server (the
	// newest bytes are kept); 0 means DefaultMaxStderrBytes.
	MaxStderrBytes int
}

// The defaults of Limits.
const (
	DefaultMaxPages        = 100
	DefaultMaxTools        = 128 // as many as OpenAI takes in one request
	DefaultMaxToolBytes    = 128 << 10
	DefaultMaxMessageBytes = 16 << 20
	DefaultMaxStderrBytes  = 64 << 10
	DefaultListTimeout     = time.Minute
)

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxPages, DefaultMaxPages)
	def(&l.MaxTools, DefaultMaxTools)
	def(&l.MaxToolBytes, DefaultMaxToolBytes)
	def(&l.MaxMessageBytes, DefaultMaxMessageBytes)
	def(&l.MaxStderrBytes, DefaultMaxStderrBytes)
	if l.ListTimeout <= 0 {
		l.ListTimeout = DefaultListTimeout
	}
	return l
}
