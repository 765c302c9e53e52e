package kit

import (
	"errors"
	"testing"
	"time"

	"github.com/agentloop/agentloop/providers"
)

// TestResolveModel: a Model is refused without an ID or with another API;
// otherwise its empty names are the provider's and the rest is kept.
func TestResolveModel(t *testing.T) {
	const api, prov = "wire-a", "vendor"
	for _, tc := range []struct {
		name string
		in   providers.Model
		want providers.Model
		err  error
	}{
		{"zero", providers.Model{}, providers.Model{}, ErrNoModel},
		{"names but no ID", providers.Model{API: api, Provider: prov}, providers.Model{}, ErrNoModel},
		{"another API", providers.Model{ID: "m", API: "wire-b"}, providers.Model{}, ErrWrongAPI},
		{"an API in another case", providers.Model{ID: "m", API: "WIRE-A"}, providers.Model{}, ErrWrongAPI},
		{"only an ID", providers.Model{ID: "m", MaxTokens: 9}, providers.Model{ID: "m", API: api, Provider: prov, MaxTokens: 9}, nil},
		{"its own provider kept", providers.Model{ID: "m", Provider: "groq"}, providers.Model{ID: "m", API: api, Provider: "groq"}, nil},
		{"whole", providers.Model{ID: "m", API: api, Provider: prov, Reasoning: true}, providers.Model{ID: "m", API: api, Provider: prov, Reasoning: true}, nil},
	} {
		got, err := ResolveModel(tc.in, api, prov)
		if !errors.Is(err, tc.err) || (err == nil && got != tc.want) {
			t.Errorf("%s: %+v, %v; want %+v, %v", tc.name, got, err, tc.want, tc.err)
		}
	}
}

// TestHTTPDefaults: every zero (or negative) limit gets its documented
// default, a set one is kept, and "never retry" stays.
func TestHTTPDefaults(t *testing.T) {
	want := providers.HTTPOptions{ConnectTimeout: 30 * time.Second, HeaderTimeout: 2 * time.Minute, IdleTimeout: 5 * time.Minute,
		MaxLineBytes: 4 << 20, MaxEventBytes: 8 << 20, MaxResponseBytes: 64 << 20, MaxErrorBodyBytes: 64 << 10,
		MaxRetries: 3, RetryBaseDelay: 500 * time.Millisecond, MaxRetryDelay: 30 * time.Second}
	if got := HTTPDefaults(providers.HTTPOptions{}); got != want {
		t.Fatalf("zero: %+v", got)
	}
	neg := providers.HTTPOptions{ConnectTimeout: -1, HeaderTimeout: -1, IdleTimeout: -1, MaxLineBytes: -1, MaxEventBytes: -1,
		MaxResponseBytes: -1, MaxErrorBodyBytes: -1, MaxRetries: -1, RetryBaseDelay: -1, MaxRetryDelay: -1}
	want.MaxRetries = -1
	if got := HTTPDefaults(neg); got != want {
		t.Fatalf("negative: %+v", got)
	}
	set := providers.HTTPOptions{IdleTimeout: time.Second, MaxLineBytes: 10, MaxRetries: 7}
	if got := HTTPDefaults(set); got.IdleTimeout != time.Second || got.MaxLineBytes != 10 || got.MaxRetries != 7 {
		t.Fatalf("set: %+v", got)
	}
}
