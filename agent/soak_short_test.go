//go:build !soak

package agent

// The soak test's size under plain go test; see TestSoak.
const soakAgents, soakTurns = 100, 20
