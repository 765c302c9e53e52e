package kit

import (
	"errors"
	"fmt"

	"github.com/agentloop/agentloop/providers"
)

// Errors of a request's Model that no server could serve, which a
// provider returns from Stream before sending anything (see ResolveModel).
var (
	// ErrNoModel is a Model without an ID: the zero Model, usually a
	// forgotten field.
	ErrNoModel = errors.New("the request's Model has no ID (make one with the provider's Model method, e.g. p.Model(\"model-name\"))")
	// ErrWrongAPI is a Model made for another API than the provider
	// speaks, such as an Anthropic model sent to an OpenAI provider.
	ErrWrongAPI = errors.New("the request's Model is for another API (make it with this provider's Model method)")
)

// ResolveModel returns the model a provider speaking api, as provider,
// serves: m with an empty API and Provider filled in, so that the message
// it streams names them. It refuses, before any request, a Model without
// an ID (ErrNoModel) and one whose API is set to another (ErrWrongAPI);
// a Provider already set is kept (it may name the vendor behind a
// compatible server, as a key lookup does).
func ResolveModel(m providers.Model, api, provider string) (providers.Model, error) {
	if m.ID == "" {
		return m, ErrNoModel
	}
	if m.API != "" && m.API != api {
		return m, fmt.Errorf("%w: model %q is for API %q, this provider speaks %q", ErrWrongAPI, m.ID, m.API, api)
	}
	m.API = api
	if m.Provider == "" {
		m.Provider = provider
	}
	return m, nil
}
