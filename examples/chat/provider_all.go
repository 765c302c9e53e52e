//go:build allproviders

package main

import (
	"context"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/auto"
)

// providerNames lists what -provider takes in this build: every provider
// of providers/auto, which links all their SDKs.
func providerNames() []string { return auto.Names }

// fromEnv returns the provider named, or for "" the first whose key is set
// (see auto.FromEnv).
func fromEnv(name string) (providers.Provider, providers.Model, bool, error) {
	return auto.FromEnv(context.Background(), name)
}

// describe says which model and provider fromEnv picked, without the key.
func describe(m providers.Model) string { return auto.Describe(m) }
