// Package gemini is a [providers.Provider] for Google's Gemini API
// (streamGenerateContent), on the official SDK (google.golang.org/genai).
//
//	p, err := gemini.New(ctx, gemini.Options{}) // the key from GEMINI_API_KEY
//	cfg := loop.Config{Provider: p, Model: p.Model("gemini-2.5-flash")}
//
// It keeps what Chat Completions loses: thought summaries, thought
// signatures on the part they came with, thought and cached tokens. New
// refuses a malformed base URL itself. Only programs that import this
// package pay for the SDK: in a build it adds 17 modules (the SDK, Google
// Cloud auth, gRPC and protobuf, x/net and x/text), and none to the go.mod
// of a program that uses another provider.
//
// Known limit: a Gemini 3 turn whose calls came from another provider has
// no thought signatures to send; Gemini validates them for the current
// turn only.
//
// It streams text, thought summaries (as thinking) and function calls,
// which Gemini sends whole. Thought signatures are kept on the block they
// came with (a call, a text part, even an empty one, or a thought) and sent
// back unchanged to the model that produced them: Gemini 3 refuses a
// history whose calls lack theirs. Calls the server sent without an id get
// one, which the results of those calls then carry.
//
// Finish reasons: STOP is stop, or toolUse when the response holds calls;
// MAX_TOKENS is length; SAFETY, RECITATION, PROHIBITED_CONTENT, BLOCKLIST,
// SPII, MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL and the rest end the
// message with stop reason error and a message naming the reason (with the
// server's finish message where the SDK passes it on: for the Gemini API
// it drops it); a blocked prompt likewise. A stream that ends
// without a finish reason is an error, never a clean stop. The SDK's
// automatic continuation is off (the Go SDK has no automatic function
// calling).
//
// The SDK sends the requests through a client with the limits of
// providers.HTTPOptions (bytes per line, per event, per response and per
// error body; connect, header and idle timeouts): its own reader would take
// an event of 256 MiB, and it turns a failed read into a chunk it then
// calls malformed; the message names the limit passed all the same. The provider retries rate limits and server errors before the
// first chunk, honouring the server's retry delay. The key goes where the
// SDK sends it (the x-goog-api-key header) and never into a message, error
// or log, in any form or part; the server's text in an error message is cut
// at 2 KiB.
package gemini

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"strings"

	"google.golang.org/genai"

	"github.com/agentloop/agentloop/internal/httpx"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/kit"
)

// API is the Model.API of models served through this package.
const API = "google-generative-ai"

// ProviderName is the Model.Provider that Provider's Model method sets.
const ProviderName = "google"

// DefaultModel is the model FromEnv names when GEMINI_MODEL is not set.
const DefaultModel = "gemini-2.5-flash"

// Options configure a Provider. The zero value talks to
// generativelanguage.googleapis.com with the key in GEMINI_API_KEY (or
// GOOGLE_API_KEY).
type Options struct {
	// APIKey is the provider's key; empty falls back to GEMINI_API_KEY,
	// then GOOGLE_API_KEY. A call's Request.APIKey (the loop's GetAPIKey
	// hooks) takes precedence: see providers.Request.APIKey.
	APIKey string
	// BaseURL is the API's base URL; empty uses Google's.
	BaseURL string
	// Model overrides the model name sent; empty uses the request's
	// Model.ID.
	Model string
	// Headers are added to every request. They may not set
	// X-Goog-Api-Key, where the key goes (APIKey): New refuses them.
	Headers map[string]string

	// HTTPOptions bound what the provider reads and how long it waits, and
	// say how it retries; the zero value means the defaults.
	providers.HTTPOptions
}

// Provider streams Gemini responses. It is safe for concurrent use.
type Provider struct {
	opts   Options
	client *genai.Client
}

// New returns a Provider. It fails on a malformed BaseURL (one that is
// not an absolute http or https URL with a host, or has a query or
// fragment), on Headers that set X-Goog-Api-Key (where the key goes) and
// on options the SDK refuses.
func New(ctx context.Context, opts Options) (*Provider, error) {
	if opts.APIKey == "" {
		opts.APIKey = envKey()
	}
	if opts.BaseURL != "" {
		if err := httpx.CheckBaseURL(opts.BaseURL, opts.APIKey); err != nil {
			return nil, fmt.Errorf("gemini: %w", err)
		}
	}
	if err := httpx.CheckHeaders(opts.Headers, "X-Goog-Api-Key"); err != nil {
		return nil, fmt.Errorf("gemini: %w", err)
	}
	opts.HTTPOptions = kit.HTTPDefaults(opts.HTTPOptions)
	p := &Provider{opts: opts}
	c, err := p.newClient(ctx, opts.APIKey)
	if err != nil {
		return nil, err
	}
	p.client = c
	return p, nil
}

func (p *Provider) newClient(ctx context.Context, key string) (*genai.Client, error) {
	cfg := &genai.ClientConfig{APIKey: key, Backend: genai.BackendGeminiAPI, HTTPClient: httpx.Client(p.opts.HTTPOptions)}
	if p.opts.BaseURL != "" {
		cfg.HTTPOptions.BaseURL = strings.TrimRight(p.opts.BaseURL, "/") + "/"
	}
	for k, v := range p.opts.Headers {
		if cfg.HTTPOptions.Headers == nil {
			cfg.HTTPOptions.Headers = map[string][]string{}
		}
		cfg.HTTPOptions.Headers.Set(k, v)
	}
	c, err := genai.NewClient(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("gemini: %s", httpx.Quote(err.Error(), key))
	}
	return c, nil
}

// Model returns the model called id as this provider serves it: its API
// API, its provider ProviderName, and Reasoning (thought summaries asked
// for). Set the other fields (prices, context window) on the value it
// returns.
func (p *Provider) Model(id string) providers.Model {
	return providers.Model{ID: id, API: API, Provider: ProviderName, Reasoning: true}
}

// Stream implements [providers.Provider]. It refuses, before any request,
// a Model no server could serve: one without an ID (unless Options.Model
// names the model) or made for another API (kit.ErrNoModel,
// kit.ErrWrongAPI). An empty Model.API or Model.Provider is taken to be
// this provider's.
func (p *Provider) Stream(ctx context.Context, req *providers.Request) (iter.Seq[providers.StreamEvent], error) {
	if req == nil {
		return nil, errors.New("gemini: a nil request")
	}
	m := req.Model
	if m.ID == "" {
		m.ID = p.opts.Model
	}
	m, err := kit.ResolveModel(m, API, ProviderName)
	if err != nil {
		return nil, fmt.Errorf("gemini: %w", err)
	}
	r := *req
	r.Model = m
	req = &r
	client, key := p.client, p.opts.APIKey
	if k := req.APIKey; k != "" && k != key {
		c, err := p.newClient(ctx, k)
		if err != nil {
			return nil, err
		}
		client, key = c, k
	}
	name := p.opts.Model
	if name == "" {
		name = req.Model.ID
	}
	contents, config := p.request(req)
	return func(yield func(providers.StreamEvent) bool) {
		s := &streamer{p: p, client: client, model: req.Model, name: name,
			Out: httpx.Out{Yield: yield, Builder: kit.ForRequest(req), Key: key}}
		s.run(httpx.Watch(ctx), contents, config) // Fail names a limit the SDK hid
	}, nil
}

// StructuredOutput reports that the provider honours Request.Output (as
// responseJsonSchema).
func (p *Provider) StructuredOutput() bool { return true }

// envKey is the key of the environment: GEMINI_API_KEY, else
// GOOGLE_API_KEY.
func envKey() string {
	if k := os.Getenv("GEMINI_API_KEY"); k != "" {
		return k
	}
	return os.Getenv("GOOGLE_API_KEY")
}

// FromEnv returns a Provider and a Model for GEMINI_API_KEY, else
// GOOGLE_API_KEY, the variables New reads (ok is false without either),
// and GEMINI_MODEL (DefaultModel when empty).
func FromEnv(ctx context.Context) (p *Provider, m providers.Model, ok bool) {
	if envKey() == "" {
		return nil, providers.Model{}, false
	}
	name := os.Getenv("GEMINI_MODEL")
	if name == "" {
		name = DefaultModel
	}
	p, err := New(ctx, Options{})
	if err != nil {
		return nil, providers.Model{}, false
	}
	return p, p.Model(name), true
}
